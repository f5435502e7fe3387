"""What the user states: launch and parameter assumptions, and buffer contracts."""
