"""The served graphs: the orecast analyst plus any LangGraph graph named by `module:attr` or `./file.py:attr`.

Each graph is compiled once at startup against the service's checkpointer and store and keyed by
its graph id, which is also the name of its default assistant.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import sys
import warnings
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import StateGraph
from langgraph.pregel import Pregel
from langgraph.store.base import BaseStore
from langgraph_sdk.auth.types import BaseUser

try:  # (langgraph-sdk >= 0.3.5) the server side builds these: hence their private names
    from langgraph_sdk.runtime import _ExecutionRuntime, _ReadRuntime
except ImportError:  # an older SDK: no factory can ask for a ServerRuntime
    _ExecutionRuntime = _ReadRuntime = None  # type: ignore[assignment,misc]


class GraphLoadError(ValueError):
    """A graph spec that does not name a LangGraph graph."""


@dataclass(frozen=True)
class ServedGraph:
    graph_id: str
    graph: Pregel
    spec: str
    # set when the spec names a factory: each run builds its own graph with it
    factory: GraphFactory | None = None


def parse_graph_option(option: str) -> tuple[str, str]:
    """`NAME=module:attr` → (NAME, spec)."""
    name, sep, spec = option.partition("=")
    if not sep or not name.strip() or ":" not in spec:
        raise GraphLoadError(f"--graph wants NAME=module:attr or NAME=./file.py:attr, got {option!r}")
    return name.strip(), spec.strip()


def _read_config(config_path: Path) -> Any:
    try:
        return json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise GraphLoadError(f"cannot read {config_path}: {exc}") from exc


def _relative_spec(config_path: Path, spec: str, what: str) -> str:
    target, sep, attr = spec.rpartition(":")
    if not sep:
        raise GraphLoadError(f"{config_path}: {what} is not path:attr")
    if target.endswith(".py") or target.startswith("."):
        target = str((config_path.parent / target).resolve())
    return f"{target}:{attr}"


def auth_from_config(path: str | Path) -> str | None:
    """The `auth.path` of a langgraph.json (a `langgraph_sdk.Auth`), relative to the file; None if absent."""
    config_path = Path(path)
    data = _read_config(config_path)
    auth = data.get("auth") if isinstance(data, dict) else None
    if not isinstance(auth, dict) or not auth.get("path"):
        return None
    return _relative_spec(config_path, str(auth["path"]), "auth.path")


def graphs_from_config(path: str | Path) -> dict[str, str]:
    """The `graphs` map of a langgraph.json, with file paths made relative to the file."""
    config_path = Path(path)
    data = _read_config(config_path)
    graphs = data.get("graphs") if isinstance(data, dict) else None
    if not isinstance(graphs, dict):
        raise GraphLoadError(f"{config_path} has no `graphs` object")
    resolved = {}
    for name, spec in graphs.items():
        if isinstance(spec, dict):  # {"path": "./x.py:graph", "description": …}
            spec = spec.get("path", "")
        resolved[name] = _relative_spec(config_path, str(spec), f"graph {name!r}")
    return resolved


def import_target(spec: str) -> Any:
    """The object `module:attr` or `./file.py:attr` names."""
    target, _, attr = spec.rpartition(":")
    if target.endswith(".py"):
        file = Path(target)
        if not file.is_file():
            raise GraphLoadError(f"graph file {file} does not exist")
        module_name = f"orecast_served_{abs(hash(str(file.resolve())))}"
        module_spec = importlib.util.spec_from_file_location(module_name, file)
        if module_spec is None or module_spec.loader is None:
            raise GraphLoadError(f"cannot load {file}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_name] = module
        module_spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise GraphLoadError(f"cannot import {target!r}: {exc}") from exc
    try:
        return getattr(module, attr)
    except AttributeError as exc:
        raise GraphLoadError(f"{target!r} has no attribute {attr!r}") from exc


@dataclass(frozen=True)
class GraphFactory:
    """A graph factory a spec names, called as LangGraph's Agent Server calls one: for each run, so a
    graph can be built for the run's user or settings. It takes nothing, the run's config, or a
    `langgraph_sdk.runtime.ServerRuntime` (a parameter annotated so): the user under custom auth, the
    store, and for a run its context as the run was given it (a dict, as langgraph-api passes it). It may be async, or return a context manager (sync or async)
    that yields the graph."""

    spec: str
    make: Callable[..., Any]
    # per parameter: whether it takes a ServerRuntime (else the config)
    runtime_params: tuple[bool, ...]
    checkpointer: BaseCheckpointSaver
    store: BaseStore

    @classmethod
    def of(
        cls, spec: str, make: Callable[..., Any], checkpointer: BaseCheckpointSaver, store: BaseStore
    ) -> GraphFactory:
        params = inspect.signature(make).parameters.values()
        return cls(spec, make, tuple(map(_takes_runtime, params)), checkpointer, store)

    async def build(
        self,
        config: Mapping[str, Any],
        resources: AsyncExitStack,
        *,
        user: BaseUser | None = None,
        context: Any = None,
        executing: bool = False,
    ) -> Pregel:
        """The factory's graph, bound to our checkpointer and store; a context it returned is entered
        on `resources`, so what it opened (an MCP client, a connection) stays open until they close.
        `executing`: for a run (its runtime then carries `context`), else to read the graph."""
        runtime: Any = None
        if any(self.runtime_params) and executing:
            runtime = _ExecutionRuntime(
                access_context="threads.create_run", user=user, store=self.store, context=context
            )
        elif any(self.runtime_params):
            runtime = _ReadRuntime(access_context="assistants.read", user=user, store=self.store)
        obj = self.make(*(runtime if wants else config for wants in self.runtime_params))
        if inspect.isawaitable(obj):
            obj = await obj
        if hasattr(obj, "__aenter__") and hasattr(obj, "__aexit__"):
            obj = await resources.enter_async_context(obj)
        elif hasattr(obj, "__enter__") and hasattr(obj, "__exit__"):
            obj = resources.enter_context(obj)
        return _bind(obj, self.spec, self.checkpointer, self.store)


def _takes_runtime(param: inspect.Parameter) -> bool:
    # (an annotation may be a string, under `from __future__ import annotations`, or a subscripted
    # alias such as ServerRuntime[MyContext]: its text names it either way)
    annotation = param.annotation
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return "ServerRuntime" in text


async def load_graph(
    graph_id: str, spec: str, checkpointer: BaseCheckpointSaver, store: BaseStore, resources: AsyncExitStack
) -> ServedGraph:
    """Import `spec`, a compiled graph, a builder or a factory of either, bound to our checkpointer and
    store.

    A factory is also called once now, with an empty config (`{"configurable": {}}`): its graph
    answers what is asked of the graph outside a run (schemas, drawing, state), and `resources` keeps
    what its context opened.
    """
    obj = import_target(spec)
    if callable(obj) and not isinstance(obj, Pregel | StateGraph):
        factory = GraphFactory.of(spec, obj, checkpointer, store)
        return ServedGraph(graph_id, await factory.build({"configurable": {}}, resources), spec, factory)
    return ServedGraph(graph_id, _bind(obj, spec, checkpointer, store), spec)


def _bind(obj: Any, spec: str, checkpointer: BaseCheckpointSaver, store: BaseStore) -> Pregel:
    if isinstance(obj, StateGraph):
        return obj.compile(checkpointer=checkpointer, store=store)
    if isinstance(obj, Pregel):
        return obj.copy(update={"checkpointer": checkpointer, "store": store})
    raise GraphLoadError(f"{spec} is a {type(obj).__name__}, not a LangGraph graph")


class GraphRegistry:
    """graph id → compiled graph."""

    def __init__(self, graphs: Mapping[str, ServedGraph]) -> None:
        self._graphs = dict(graphs)

    def __contains__(self, graph_id: str) -> bool:
        return graph_id in self._graphs

    def get(self, graph_id: str) -> ServedGraph | None:
        return self._graphs.get(graph_id)

    def ids(self) -> list[str]:
        return list(self._graphs)


def _schema(call: Any) -> dict | None:
    try:
        with warnings.catch_warnings():  # config schemas are deprecated upstream yet still served
            warnings.simplefilter("ignore")
            return call()
    except Exception:  # some state types have no JSON schema; the API then says null
        return None


def graph_schemas(served: ServedGraph) -> dict[str, Any]:
    graph = served.graph
    return {
        "graph_id": served.graph_id,
        "input_schema": _schema(graph.get_input_jsonschema),
        "output_schema": _schema(graph.get_output_jsonschema),
        "state_schema": _schema(graph.get_output_jsonschema),
        "config_schema": _schema(graph.get_config_jsonschema),
        "context_schema": _schema(graph.get_context_jsonschema),
    }


def graph_drawing(served: ServedGraph, xray: bool | int) -> dict[str, Any]:
    drawing = served.graph.get_graph(xray=xray).to_json()
    for node in drawing.get("nodes", ()):  # as langgraph-api: no runnable class path in a node's data
        if isinstance(node.get("data"), dict):
            node["data"].pop("id", None)
    return drawing
