"""The package's import graph: packages depend one way, and no module reaches itself.

Packages sit in layers (:data:`LAYERS`, lowest first); a module imports only modules of its own
package or of a lower layer, never of its own layer or above. Below that, no module of
``src/`` reaches itself through its imports.

Every import counts, the lazy ones inside functions included (they are how circles hide), and
so do ``TYPE_CHECKING`` imports: a circle that type checkers must follow is still a circle in
the design. An import of a package counts as an import of its ``__init__``.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "embedding_ttc"
SRC = Path(__file__).resolve().parents[1] / "src" / PACKAGE

LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"errors"}),
    frozenset({"registry", "durable", "__init__"}),
    frozenset({"executors"}),
    frozenset({"tasks", "encoders", "llm"}),
    frozenset({"programs"}),
    frozenset({"evaluation"}),
    frozenset({"program_files", "runs"}),
    frozenset({"search", "analysis", "deploy", "bench"}),
    frozenset({"tune", "integrations"}),
    frozenset({"cli"}),
)
"""The packages (and top-level modules) of ``src/embedding_ttc``, lowest layer first.

Data, encoders and the offline LLM loader; programs, which use encoders; evaluation, which runs
programs on tasks; program files (the contract, checks and sandbox that run a program written
as source) and a search run's records on disk; then the three things built on them, which know
nothing of each other: the search, the analysis (transfer study, report) and the deployment;
then the framework adapters over the deployment, and the command line over everything.
``__init__`` is the package's own ``__init__`` (its version).
"""


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is a module of the package."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from pkg import sub`` imports the submodule ``pkg.sub`` when there is one.
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        for target in targets:
            if target.split(".")[0] != PACKAGE:
                continue
            resolved = _resolve(target, modules)
            if resolved and resolved != module:
                found.add(resolved)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (directly, anywhere in its body)."""
    modules = _modules()
    return {m: _imports(m, p, modules) for m, p in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_finder_sees_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_graph_reads_lazy_imports() -> None:
    graph = import_graph()
    assert f"{PACKAGE}.errors" in graph
    # The evaluate command imports the evaluator lazily, inside a function.
    assert f"{PACKAGE}.evaluation.evaluate" in graph[f"{PACKAGE}.cli.evaluate"]
    # ``from embedding_ttc.cli.common import x`` is an import of that module, not of the package.
    assert f"{PACKAGE}.cli.common" in graph[f"{PACKAGE}.cli.deploy"]
    assert f"{PACKAGE}.cli" not in graph[f"{PACKAGE}.cli.deploy"]


def top_level(module: str) -> str:
    """The package or top-level module of ``src/embedding_ttc`` that ``module`` belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer_of(name: str) -> int:
    """The layer of a package or top-level module (an unlisted one is an error)."""
    for number, members in enumerate(LAYERS):
        if name in members:
            return number
    raise AssertionError(f"{PACKAGE}.{name} is in no layer of LAYERS: place it there")


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a module of the same layer or above, as ``a -> b`` lines."""
    found = []
    for module, imported in sorted(graph.items()):
        own = top_level(module)
        for target in sorted(imported):
            other = top_level(target)
            if other != own and layer_of(other) >= layer_of(own):
                found.append(f"{module} -> {target}")
    return found


def test_the_layer_check_sees_an_upward_import() -> None:
    graph = {
        f"{PACKAGE}.programs.base": {f"{PACKAGE}.evaluation.metrics"},
        f"{PACKAGE}.evaluation.metrics": {f"{PACKAGE}.programs.base"},
        f"{PACKAGE}.deploy.index": {f"{PACKAGE}.search.loop"},
        f"{PACKAGE}.cli.deploy": {f"{PACKAGE}.deploy.index", f"{PACKAGE}"},
    }
    assert upward_imports(graph) == [
        f"{PACKAGE}.deploy.index -> {PACKAGE}.search.loop",
        f"{PACKAGE}.programs.base -> {PACKAGE}.evaluation.metrics",
    ]


def test_every_package_has_a_layer() -> None:
    names = {top_level(m) for m in import_graph()}
    placed = set().union(*LAYERS)
    assert names <= placed, f"not in LAYERS: {sorted(names - placed)}"
    assert not placed - names, f"LAYERS names what src/ lacks: {sorted(placed - names)}"


def test_packages_depend_one_way() -> None:
    found = upward_imports(import_graph())
    assert not found, "imports of a package of the same layer or above:\n" + "\n".join(found)


def test_no_import_circles() -> None:
    found = circles(import_graph())
    assert not found, "import circles between modules of src/:\n" + "\n".join(
        " <-> ".join(c) for c in found
    )


# --- one home per concept -------------------------------------------------------------------
#
# Each concept below is defined in one module, at the lowest layer that needs it; every other
# module imports it from there. A concept is named by the top-level functions and classes that
# define it (and, for the LaTeX table writer, by the code that writes a tabular).

CONCEPT_HOMES: dict[str, tuple[str, frozenset[str]]] = {
    "BM25 scoring": ("programs.text.bm25", frozenset({"BM25", "bm25_analysed"})),
    "min-max rows": ("programs.primitives.scores", frozenset({"minmax_rows", "_minmax_rows"})),
    "a table and its writers": ("evaluation.grid", frozenset({"Grid", "tex_escape", "_tex"})),
    "the chunked encode": ("encoders.encode", frozenset({"encode_texts"})),
    "the output check": ("programs.output", frozenset({"check_output", "ProgramOutputError"})),
    "the program-file record and loader": (
        "program_files.program_file",
        frozenset(
            {
                "ProgramFile",
                "FileProgram",
                "read_program_file",
                "read_program_files",
                "read_program_source",
                "load_program_file",
                "load_program_files",
                "load_file_programs",
            }
        ),
    ),
}
"""Concept -> (its one module, below ``embedding_ttc``; the names only that module defines)."""

ONE_DEFINITION = frozenset({"bm25_scores"})
"""Names that one module at most defines (two functions of one name did two things)."""


def top_level_definitions(path: Path) -> set[str]:
    """The names of the functions and classes defined at the top level of a module."""
    tree = ast.parse(path.read_text(), str(path))
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {node.name for node in tree.body if isinstance(node, kinds)}


def definers(name: str) -> list[str]:
    """The modules (below ``embedding_ttc``) that define ``name`` at their top level."""
    return sorted(
        module.removeprefix(f"{PACKAGE}.")
        for module, path in _modules().items()
        if name in top_level_definitions(path)
    )


def definers_in(home: str) -> set[str]:
    """The top-level names of module ``home`` (below ``embedding_ttc``)."""
    return top_level_definitions(_modules()[f"{PACKAGE}.{home}"])


def writes_a_tabular(path: Path) -> bool:
    """Whether a string of the module (an f-string's literal parts included) opens a tabular."""
    tree = ast.parse(path.read_text(), str(path))
    return any(
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and "\\begin{tabular}" in node.value
        for node in ast.walk(tree)
    )


def test_the_definition_finder_reads_top_level_names_only(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "class A:\n    def inner(self):\n        pass\n\n\n"
        "def f():\n    def g():\n        pass\n\n\n"
        "X = 1\n"
        'T = rf"\\begin{{tabular}}{{{X}}}"\n'
    )
    assert top_level_definitions(module) == {"A", "f"}
    assert writes_a_tabular(module)
    module.write_text('T = "tabular"\n')
    assert not writes_a_tabular(module)


def test_each_concept_is_defined_in_its_one_module() -> None:
    wrong = []
    for concept, (home, names) in CONCEPT_HOMES.items():
        assert f"{PACKAGE}.{home}" in _modules(), f"{concept}: no module {home}"
        for name in sorted(names):
            elsewhere = [m for m in definers(name) if m != home]
            if elsewhere:
                wrong.append(f"{concept}: {name} defined in {', '.join(elsewhere)}, not {home}")
    assert not wrong, "\n".join(wrong)
    for concept, (home, names) in CONCEPT_HOMES.items():
        assert names & set(definers_in(home)), f"{concept}: {home} defines none of {names}"


def test_no_two_modules_define_a_name_that_did_two_things() -> None:
    for name in sorted(ONE_DEFINITION):
        assert len(definers(name)) <= 1, f"{name} is defined in {definers(name)}"


def test_one_module_writes_latex_tables() -> None:
    writers = sorted(m for m, path in _modules().items() if writes_a_tabular(path))
    assert writers == [f"{PACKAGE}.{CONCEPT_HOMES['a table and its writers'][0]}"]


def test_the_deployment_imports_nothing_of_the_evaluator() -> None:
    graph = import_graph()
    reaching = sorted(
        m
        for m, imported in graph.items()
        if top_level(m) == "deploy" and f"{PACKAGE}.evaluation.evaluate" in imported
    )
    assert not reaching, f"deploy modules importing evaluation.evaluate: {reaching}"


EXECUTORS_HOME = f"{PACKAGE}.executors"
"""Where work runs, in this process or as Ray tasks: the one module that talks to Ray's tasks."""

RAY_TASK_CALLS = frozenset({"remote", "wait", "get", "cancel"})
"""The Ray calls that submit, await, read or cancel tasks."""


def ray_task_calls(source: str) -> list[int]:
    """The lines of calls ``ray.f(...)`` or ``self.ray.f(...)`` with ``f`` in
    :data:`RAY_TASK_CALLS` (``ray.remote(...)(f)`` included)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        owner = node.func.value
        on_ray = (isinstance(owner, ast.Name) and owner.id == "ray") or (
            isinstance(owner, ast.Attribute)
            and owner.attr == "ray"
            and isinstance(owner.value, ast.Name)
            and owner.value.id == "self"
        )
        if on_ray and node.func.attr in RAY_TASK_CALLS:
            lines.append(node.lineno)
    return sorted(lines)


def executor_classes(source: str) -> list[str]:
    """The classes a module defines (at any depth) whose name ends in ``Executor``."""
    classes = (n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef))
    return sorted(n.name for n in classes if n.name.endswith("Executor"))


def test_the_executor_checks_see_ray_calls_and_executor_classes() -> None:
    source = (
        "class RayTaskExecutor:\n"
        "    def run(self, refs):\n"
        "        self.ray.cancel(refs[0])\n"
        "        return self.ray.get(refs)\n\n\n"
        "def submit(ray, f):\n"
        "    return ray.remote(num_cpus=1)(f), ray.put(1), ray.nodes(), other.get(1)\n"
    )
    assert ray_task_calls(source) == [3, 4, 8]
    assert executor_classes(source) == ["RayTaskExecutor"]


def test_the_executor_mechanism_is_defined_once() -> None:
    found = []
    for module, path in _modules().items():
        if module == EXECUTORS_HOME:
            continue
        source = path.read_text(encoding="utf-8")
        found += [f"{module}:{line}: a Ray task call" for line in ray_task_calls(source)]
        found += [f"{module}: class {name}" for name in executor_classes(source)]
    assert not found, (
        f"where work runs is {EXECUTORS_HOME}'s (run work over it, do not submit to Ray or "
        "define an executor elsewhere):\n" + "\n".join(found)
    )
    assert executor_classes(_modules()[EXECUTORS_HOME].read_text(encoding="utf-8"))


def test_one_module_is_named_channels() -> None:
    named = sorted(m for m in _modules() if m.rsplit(".", 1)[-1] == "channels")
    assert named == [f"{PACKAGE}.programs.primitives.channels"]


def test_the_fusion_primitives_take_the_mask_by_keyword_only() -> None:
    # rrf(channels, mask) and fuse(channels, weights, mask) put different things second.
    import inspect

    from embedding_ttc.programs.primitives.channels import fuse
    from embedding_ttc.programs.primitives.scores import rrf

    for function, positional in ((rrf, ["channels"]), (fuse, ["channels", "weights"])):
        parameters = inspect.signature(function).parameters.values()
        assert [p.name for p in parameters if p.kind != p.KEYWORD_ONLY] == positional
        assert inspect.signature(function).parameters["mask"].kind == inspect.Parameter.KEYWORD_ONLY


# ---------------------------------------------------------------------------------------------
# A search is opened from a typed config: argparse stays in the CLI, and nothing outside the
# CLI's own tests builds a command line to start a search.

REPO = SRC.parents[1]

ARGPARSE_ALLOWED: dict[str, str] = {
    f"{PACKAGE}.tasks.packaged.build": "a maintainer's script that rebuilds the packaged tasks",
}
"""Modules outside ``cli/`` that may read a command line, each with the reason."""

SEARCH_ARGV_ALLOWED: dict[str, str] = {
    "tests/encoders/test_device.py": "every command refuses a bad --device before it starts",
    "tests/tasks/test_shared_tasks.py": "search refuses transfer-only tasks before it starts",
}
"""Tests outside ``tests/test_cli*.py`` that give the CLI a ``search`` command line, each
with the reason: they check that the command refuses its input, and start no search."""


def _imported_modules(tree: ast.AST) -> set[str]:
    """Every module a file imports (``from m import n``: ``m`` and ``m.n``), at any depth."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def argparse_outside_cli() -> list[str]:
    """The modules of ``src/`` outside ``cli/`` that import argparse."""
    return sorted(
        module
        for module, path in _modules().items()
        if top_level(module) != "cli"
        and module not in ARGPARSE_ALLOWED
        and "argparse" in _imported_modules(ast.parse(path.read_text(encoding="utf-8")))
    )


def _a_search_command_line(node: ast.AST) -> bool:
    """A list literal whose first element is ``"search"`` (the command's argv; a tuple is
    an argv only when starred into a list)."""
    if not isinstance(node, ast.List) or not node.elts:
        return False
    first = node.elts[0]
    if isinstance(first, ast.Starred) and isinstance(first.value, ast.Tuple):
        first = first.value.elts[0] if first.value.elts else first
    return isinstance(first, ast.Constant) and first.value == "search"


def starts_a_search_through_the_cli(source: str) -> list[str]:
    """How a file starts a search through the CLI: its search module, or a ``search`` argv.

    A file that imports the CLI's ``search`` module, or that imports the CLI and holds an
    argument list beginning with ``search`` (``main(["search", ...])``), starts a search by
    building a command line. (Running ``python -m embedding_ttc.cli search`` in a subprocess,
    as a user would, is not an import.)
    """
    tree = ast.parse(source)
    imported = _imported_modules(tree)
    why = sorted(m for m in imported if m.startswith(f"{PACKAGE}.cli.search"))
    if any(m == f"{PACKAGE}.cli" or m.startswith(f"{PACKAGE}.cli.") for m in imported):
        lines = sorted({n.lineno for n in ast.walk(tree) if _a_search_command_line(n)})
        why += [f"a search command line at line {line}" for line in lines]
    return why


def _outside_the_cli_tests() -> list[Path]:
    tests = sorted((REPO / "tests").rglob("*.py"))
    benchmarks = sorted((REPO / "benchmarks").rglob("*.py"))
    return [
        p
        for p in tests + benchmarks
        if not p.name.startswith("test_cli") and str(p.relative_to(REPO)) not in SEARCH_ARGV_ALLOWED
    ]


def test_the_argparse_check_sees_an_import() -> None:
    assert "argparse" in _imported_modules(ast.parse("def f():\n    import argparse\n"))
    assert "argparse.Namespace" in _imported_modules(ast.parse("from argparse import Namespace"))


def test_the_search_check_sees_a_command_line() -> None:
    assert starts_a_search_through_the_cli("from embedding_ttc.cli.search import _config")
    built = 'from embedding_ttc.cli import main\nmain([*("search", "--run-dir", "x")])\n'
    assert starts_a_search_through_the_cli(built) == ["a search command line at line 2"]
    other = 'from embedding_ttc.cli import main\nmain(["frontier", "run"])\n'
    assert starts_a_search_through_the_cli(other) == []
    assert starts_a_search_through_the_cli('x = ["search", "--run-dir"]\n') == []
    choices = 'from embedding_ttc.cli import main\nchoices = ("search", "v1")\n'
    assert starts_a_search_through_the_cli(choices) == []


def test_argparse_only_in_the_cli() -> None:
    found = argparse_outside_cli()
    assert not found, f"argparse imported outside embedding_ttc.cli: {', '.join(found)}"


def test_no_benchmark_or_test_of_another_package_starts_a_search_through_the_cli() -> None:
    found = {
        str(path.relative_to(REPO)): why
        for path in _outside_the_cli_tests()
        if (why := starts_a_search_through_the_cli(path.read_text(encoding="utf-8")))
    }
    assert not found, (
        "start a search with embedding_ttc.search.open.open_search, not a command line "
        f"(the CLI's own tests are tests/test_cli*.py): {found}"
    )
