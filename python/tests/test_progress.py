# SPDX-License-Identifier: BSD-3-Clause
import io

from gmb.run.progress import Progress


def test_batch_log_gets_one_plain_line_per_ended_launch():
    out = io.StringIO()  # not a terminal: a batch job's log
    bar = Progress(3, out)
    bar.update(current="b1.lib.latency.r1")  # started: nothing written
    bar.update("ok", "b1.lib.latency.r1", wall_s=2.04)
    bar.update("failed", "b2.lib.bw.r1", wall_s=1.5, reason="MPI_Waitall failed")
    bar.update("skipped", "b3.lib.bw.r1", reason="the library's last 3 launches failed")
    bar.close()
    text = out.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert len(lines) == 4
    assert lines[0].startswith("gmb: [1/3 ") and "ok" in lines[0] and "b1.lib.latency.r1 2.0 s" in lines[0]
    assert "failed" in lines[1] and lines[1].endswith(": MPI_Waitall failed")
    assert "skipped" in lines[2]
    assert lines[3].startswith("gmb: 3 launches in ") and "1 failed, 1 ok, 1 skipped" in lines[3]


def test_terminal_gets_a_live_line_and_a_line_for_each_launch_not_ok():
    out = io.StringIO()
    bar = Progress(2, out, live=True)
    bar.update(current="b1.lib.latency.r1")
    bar.update("ok", "b1.lib.latency.r1")
    bar.update("timeout", "b2.lib.bw.r1", reason="killed after 90 s")
    bar.close()
    text = out.getvalue()
    assert text.count("\r") >= 3  # redrawn in place
    finished = [ln.split("\r")[-1] for ln in text.split("\n") if ln.split("\r")[-1].strip()]
    assert "gmb: timeout: b2.lib.bw.r1: killed after 90 s" in finished
    assert finished[-1].startswith("gmb: 2 launches in ")
