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
