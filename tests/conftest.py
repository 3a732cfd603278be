import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).parent))

import os
import uuid

from lsp_fixtures import processes


def pytest_configure(config):
    # Every process the suite starts inherits this marker: the session's end can find what it left running.
    os.environ[processes.SESSION_VARIABLE] = uuid.uuid4().hex


def pytest_sessionfinish(session, exitstatus):
    """`make test` must leave no process behind (an orphaned jedi worker holds 300 MB): list and end them."""
    left = processes.end_leftovers(os.environ[processes.SESSION_VARIABLE])
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = ["processes the test session left running (now ended):"] + [f"  {p.pid} {p.command}" for p in left]
        if reporter is not None:
            reporter.write_line("\n" + "\n".join(lines), red=True)
        session.exitstatus = 1
