"""The Typer command line: parse, call one core function, render its result."""
