"""The type stub `_core.pyi` says what the binding has: the same functions
with the same parameters and defaults, the same exceptions and constants."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from undertow import _core


def stub_tree() -> ast.Module:
    path = Path(__file__).resolve().parent.parent / "python" / "undertow" / "_core.pyi"
    return ast.parse(path.read_text())


def stub_functions() -> dict[str, list[tuple[str, bool]]]:
    """Each stubbed function's (parameter, has a default), in order."""
    out = {}
    for node in stub_tree().body:
        if isinstance(node, ast.FunctionDef):
            a = node.args
            first_default = len(a.args) - len(a.defaults)
            out[node.name] = [(p.arg, i >= first_default) for i, p in enumerate(a.args)]
    return out


def test_every_function_of_the_binding_is_stubbed_with_its_parameters():
    stub = stub_functions()
    real = {}
    for name, obj in vars(_core).items():
        if callable(obj) and not isinstance(obj, type) and not name.startswith("_"):
            sig = inspect.signature(obj)
            real[name] = [(p.name, p.default is not inspect.Parameter.empty) for p in sig.parameters.values()]
    assert sorted(stub) == sorted(real), "functions differ between _core.pyi and the binding"
    for name in real:
        assert stub[name] == real[name], f"{name}: stub {stub[name]} against binding {real[name]}"


def test_every_exception_and_constant_of_the_binding_is_stubbed():
    names = set()
    for node in stub_tree().body:
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    real = {n for n, o in vars(_core).items() if not n.startswith("__") and (isinstance(o, (type, int, str)))}
    real.add("__version__")
    # Helper types the stub declares for readers (TypedDicts) need not exist at run time.
    assert real <= names | {"__version__"}, f"not in _core.pyi: {sorted(real - names)}"
    exceptions = {n for n, o in vars(_core).items() if isinstance(o, type) and issubclass(o, BaseException)}
    declared = {n.name for n in stub_tree().body if isinstance(n, ast.ClassDef) and any(
        isinstance(b, ast.Name) and b.id.endswith("Error") for b in n.bases)}
    assert exceptions == declared
