"""Hostile programs against the real daemon: each is contained, reported with the right
status, and leaves the host and the next program unaffected."""

import os
import socket
import threading

from sandbox_support import ONE_ENGINE

RUN = [{"stdin": ""}]  # run once on empty stdin, output not judged (with no tests a program is only built)
HELLO = ("Python", "print('still fine')\n")


def next_program_is_fine(pool):
    result = pool.run_one(*HELLO, RUN)
    assert result["status"] == "ok" and result["tests"][0]["stdout"].strip() == "still fine"


def test_fork_bomb(pool):
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    assert pool.run_one("Python", code, RUN)["status"] in ("timeout", "runtime_error", "memory_limit")
    next_program_is_fine(pool)


def test_memory_hog(pool):
    code = "x = []\nwhile True:\n    x.append(bytearray(50 * 1024 * 1024))\n"
    result = pool.run_one("Python", code, RUN)
    assert result["status"] in ("memory_limit", "runtime_error"), result  # OOM kill, or MemoryError
    next_program_is_fine(pool)


def test_infinite_loop_and_sleep_forever(pool):
    assert pool.run_one("C", "int main(void){for(;;){}}\n", RUN)["status"] == "timeout"
    assert pool.run_one("Python", "import time\ntime.sleep(10**6)\n", RUN)["status"] == "timeout"
    next_program_is_fine(pool)


@ONE_ENGINE
def test_gigabyte_of_stdout(pool):
    result = pool.run_one("C", "#include <stdio.h>\nint main(void){for(;;) fputs(\"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\n\", stdout);}\n", RUN)
    assert result["status"] == "output_limit"
    assert len(result["tests"][0]["stdout"]) <= 4096
    next_program_is_fine(pool)


def test_writes_outside_the_work_folder_fail(pool):
    for path in ("/etc/evil", "/usr/bin/evil", "/opt/aicd/runner.py", "/home/x"):
        result = pool.run_one("Python", f"open({path!r}, 'w').write('x')\n", RUN)
        assert result["status"] == "runtime_error", (path, result)
    assert not os.path.exists("/etc/evil")
    next_program_is_fine(pool)


@ONE_ENGINE
def test_reading_secrets_and_host_paths_fails(pool):
    shadow = pool.run_one("Python", "print(open('/etc/shadow').read())\n", RUN)
    assert shadow["status"] == "runtime_error" and "Permission denied" in shadow["tests"][0]["stderr"]
    host = pool.run_one("Python", f"print(open({os.path.abspath(__file__)!r}).read())\n", RUN)
    assert host["status"] == "runtime_error"  # no host path is mounted


def test_no_network(pool):
    dns = pool.run_one("Python", "import socket\nprint(socket.gethostbyname('deb.debian.org'))\n", RUN)
    assert dns["status"] == "runtime_error"
    server = socket.socket()
    server.bind(("0.0.0.0", 0))
    server.listen(1)
    port = server.getsockname()[1]
    hits = []

    def accept():
        try:
            hits.append(server.accept())
        except OSError:  # closed below, nobody having connected
            pass

    threading.Thread(target=accept, daemon=True).start()
    host_ip = "172.17.0.1"  # Docker's bridge: how a container would reach the host (none here, on either engine)
    code = f"import socket\nsocket.create_connection(({host_ip!r}, {port}), timeout=2)\nprint('connected')\n"
    tcp = pool.run_one("Python", code, RUN)
    server.close()
    assert tcp["status"] == "runtime_error" and not hits


def test_killing_pid_1_and_processes_left_behind(pool):
    kill1 = pool.run_one("Python", "import os, signal\nos.kill(1, signal.SIGKILL)\nprint('tried')\n", RUN)
    assert kill1["status"] in ("ok", "runtime_error")
    next_program_is_fine(pool)
    # A daemonised child that outlives its parent must not survive into the next program.
    code = ("import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(1000)\nelse:\n    print('parent done')\n")
    assert pool.run_one("Python", code, RUN)["status"] == "ok"
    ps = pool.run_one("Python", "import os\nprint(len([p for p in os.listdir('/proc') if p.isdigit()]))\n", RUN)
    # left: PID 1 (sleep), the runner, python itself, and at most the exec's own helpers
    assert int(ps["tests"][0]["stdout"]) <= 4, ps


@ONE_ENGINE
def test_rows_out_equal_rows_in_despite_hostile_neighbours(pool):
    items = [(*HELLO, RUN), ("C", "int main(void){for(;;){}}\n", RUN), ("Python", "x = [0] * 10**10\n", RUN), (*HELLO, RUN),
             ("Nope", "", RUN)]
    results = pool.run_many(items)
    assert len(results) == len(items)
    assert [r["status"] for r in results][0] == "ok" and results[3]["status"] == "ok"
    assert results[1]["status"] == "timeout" and results[4]["status"] == "sandbox_error"
