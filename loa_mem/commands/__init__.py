"""One module per group of commands. Each core function takes a `Store`, does the work, and
returns a frozen result; it never prints. The CLI renders the result."""
