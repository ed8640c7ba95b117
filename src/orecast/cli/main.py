"""Entry point of the `orecast` console script.

Each part of the product registers its commands from its own module, so a newcomer finds
`orecast threads …` in `cli/threads.py`, `orecast forecast …` in `cli/market.py` and so on.
"""

from __future__ import annotations

import typer

from orecast.cli import chat, db, market, serve, threads

app = typer.Typer(
    name="orecast",
    help="Iron-ore price forecasting agent with durable conversations / 铁矿石价格预测智能体",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

for module in (chat, market, threads, db, serve):
    module.register(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
