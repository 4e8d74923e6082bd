"""The commands of the memory store. Each core function takes a `Store`, does the work, and returns
a frozen result; it never prints. The CLI renders the result."""
