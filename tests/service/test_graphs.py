"""Serving outside graphs: `--config langgraph.json` (paths relative to the file) and bad specs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orecast.service.graphs import GraphLoadError, graphs_from_config, parse_graph_option
from tests.service.conftest import ECHO_FILE, Server, say, settings_for


def test_graph_options_and_config_files(tmp_path: Path) -> None:
    assert parse_graph_option("a=pkg.mod:graph") == ("a", "pkg.mod:graph")
    for bad in ("nonsense", "=x:y", "a=pkg.mod"):
        with pytest.raises(GraphLoadError):
            parse_graph_option(bad)
    config = tmp_path / "langgraph.json"
    config.write_text(json.dumps({"graphs": {"mine": "./graphs/g.py:graph", "pkg": "pkg.mod:make"}}))
    assert graphs_from_config(config) == {
        "mine": f"{(tmp_path / 'graphs' / 'g.py').resolve()}:graph",
        "pkg": "pkg.mod:make",
    }
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(GraphLoadError):
        graphs_from_config(tmp_path / "broken.json")


async def test_serves_the_graphs_of_a_langgraph_json(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "agent.py").write_text(Path(ECHO_FILE).read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "langgraph.json").write_text(json.dumps({"graphs": {"agent": "./agent.py:graph"}}))
    settings = settings_for(
        f"sqlite:///{tmp_path / 'db.sqlite3'}", analyst=False, graphs={},
        config_file=str(folder / "langgraph.json"),
    )
    server = Server.start(settings)
    try:
        client = server.client()
        assert [a["graph_id"] for a in await client.assistants.search()] == ["agent"]
        out = await client.runs.wait(None, "agent", input=say("from json"))
        assert out["messages"][-1]["content"] == "echo: from json"
    finally:
        server.stop()
