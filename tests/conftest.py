import os
import sys

import pytest

# make the tests' private helper modules (tests/_*.py) importable
sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True, scope="session")
def _checkpoint_key(tmp_path_factory):
    """Checkpoints are signed with a key of the test session, not the user's (~/.cache)."""
    from relu_gating.search.state import KEY_ENV

    old = os.environ.get(KEY_ENV)
    os.environ[KEY_ENV] = str(tmp_path_factory.mktemp("key") / "checkpoint.key")
    yield
    if old is None:
        os.environ.pop(KEY_ENV, None)
    else:
        os.environ[KEY_ENV] = old


#: In CI (``.ci/run`` sets it) a skip is a failure: a skipped oracle comparison proves nothing, and
#: every optional oracle (SCIP, dask, scikit-learn, mpmath) is in the ``test`` extra.
NO_SKIPS = os.environ.get("RELU_GATING_NO_SKIPS") == "1"


def _as_failure(report) -> None:
    if NO_SKIPS and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under RELU_GATING_NO_SKIPS=1 (CI): {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _as_failure(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _as_failure(outcome.get_result())
