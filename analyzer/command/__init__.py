"""The command line's helpers: what `check` reads (inputs, configuration, suppression comments),
how a run is spread (worker processes, shards, the result cache, the progress bar), and the
`confirm` command's replay of findings on the interpreter."""
