"""The `duplicast` command: argument parsing, the runners of each role, offline tools."""
