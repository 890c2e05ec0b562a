"""The main job, `gpath demo`, on the real WaterFlow data."""

import numpy as np

from gpath.cli import main, run_demo


def test_demo_checks_every_update_and_plots(tmp_path, capsys):
    png = tmp_path / "demo.png"
    records = run_demo(window=300, step=20, max_updates=4, plot=str(png), progress=False)
    assert len(records) == 4
    for r in records:
        assert r.kkt <= 1e-9 and r.reference_diff <= 1e-7 and r.sid_diff <= 1e-9
        assert r.mid_breakpoints <= r.sid_breakpoints
        assert 0.0 <= r.accuracy <= 1.0
    out = capsys.readouterr().out
    assert "checks passed on every update" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_entry_point(capsys):
    assert main(["demo", "--window", "200", "--step", "10", "--max-updates", "2", "--no-progress",
                 "--C", "1", "--gamma", "2.0"]) == 0
    out = capsys.readouterr().out
    assert "C=1.0, gamma=2" in out and "checks passed" in out
    assert np.isfinite(float(out.split("online accuracy ")[1].split()[0]))
