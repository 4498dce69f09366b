from typing import Callable, Optional, TypedDict

__version__: str

class ScenarioError(ValueError): ...
class RunError(OSError): ...

class ScenarioInfo(TypedDict):
    file: str
    name: str
    cases: list[str]
    baseline: Optional[str]
    duration_s: float

def load(path: str) -> ScenarioInfo: ...
def resolve(path: str, case: Optional[str] = None, seed: Optional[int] = None) -> str: ...
def run(
    path: str,
    out_dir: str,
    case: Optional[str] = None,
    seed: Optional[int] = None,
    progress: Optional[Callable[[float], None]] = None,
) -> tuple[str, str]: ...
