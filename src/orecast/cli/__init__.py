"""The `orecast` command line: one Typer app, one module per part (db, threads, market, chat)."""
