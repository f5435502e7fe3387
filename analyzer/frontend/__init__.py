"""Front ends: parse a dialect's source with its Lark grammar and lower it into the kernel IR."""
