import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from llm_server import running_server


@pytest.fixture(scope="module")
def server():
    with running_server(slow=3.0) as srv:
        yield srv
