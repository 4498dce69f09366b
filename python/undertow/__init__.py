"""undertow: realistic, responsive background traffic for evaluating networked applications.

The simulator and the scenario schema live in the Rust core (``undertow._core``);
this package adds the command line, running several cases, and reading results.
"""

from undertow._core import RunError, ScenarioError, __version__
from undertow.runner import CaseResult, load, run_case, run_file

__all__ = [
    "CaseResult",
    "RunError",
    "ScenarioError",
    "__version__",
    "load",
    "run_case",
    "run_file",
]
