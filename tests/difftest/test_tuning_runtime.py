"""The generated tuner's choice (`_appyc_fastest`), run on the CPU with CUDA events stubbed by a
clock that each launch advances by a scripted time. A slow stretch of the device at the start
(clocks rising from idle) must not make the tuner pick the slower configuration: candidates take
turns. The kernel's default runs in the same rounds, in every call that tunes, and is kept unless
a candidate's runs are more than 3 % faster than the default's of the same rounds, in the median:
a candidate faster only within the noise, or only in a lucky run, is not kept. A cached choice
that is no configuration of the kernel is tuned again, with a warning, never raised. Tuning is
spread over calls within a time budget, and its progress survives in the cache file.
"""
import importlib.util
import json
import random
import types
import warnings

import pytest

import torch

from test_samples import compile_sample


class Device:
    """A clock, CUDA-event stand-ins that read it, and launches that advance it: each run of a
    configuration takes its base time, plus `slow_by` for the first `slow_runs` runs timed."""

    def __init__(self, base, slow_runs, slow_by):
        self.base, self.slow_runs, self.slow_by = base, slow_runs, slow_by
        self.now, self.timed_runs, self.runs = 0.0, 0, []
        device = self

        class Event:
            def __init__(self, enable_timing=False):
                self.at = None

            def record(self):
                self.at = device.now

            def synchronize(self):
                pass

            def elapsed_time(self, end):
                return end.at - self.at

        self.torch = types.SimpleNamespace(cuda=types.SimpleNamespace(Event=Event))

    def launch(self, config):
        self.runs.append(config)
        took = self.base[config]
        if len(self.runs) > len(self.base):  # past the warm-up launches: a timed run
            self.timed_runs += 1
            if self.timed_runs <= self.slow_runs:
                took += self.slow_by
        self.now += took


def generated(tmp_path):
    path = compile_sample("vector_add", tmp_path)
    spec = importlib.util.spec_from_file_location("tuning_runtime_vector_add", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def tuner(tmp_path, monkeypatch, device):
    mod = generated(tmp_path)
    monkeypatch.setattr(mod, "torch", types.SimpleNamespace(**{**vars(torch), **vars(device.torch)}))
    monkeypatch.setattr(mod, "_appyc_spin", lambda: None)
    return mod._appyc_fastest


def test_a_slow_start_of_the_device_does_not_pick_the_slower_configuration(tmp_path, monkeypatch):
    # (a) takes 1.0 ms, (b) 1.2 ms; the first six timed runs are 1.0 ms slower. Timed one
    # candidate after the other, (a) would get all six slow runs and lose.
    device = Device({"a": 1.0, "b": 1.2}, slow_runs=6, slow_by=1.0)
    fastest = tuner(tmp_path, monkeypatch, device)
    written = [torch.ones(4)]
    assert fastest("k", ["a", "b"], "a", written, device.launch) == "a"
    # Turns: after one warm-up launch each, a, b, a, b, ...
    timed = device.runs[2:]
    assert timed[:4] == ["a", "b", "a", "b"]
    # Rounds stop once each candidate has 10 ms of runs: (a)'s three slow runs (2 ms) and four
    # more (1 ms) make 10 ms in seven rounds.
    assert timed.count("a") == timed.count("b") == 7


def test_written_arrays_are_restored_and_a_long_run_is_timed_once(tmp_path, monkeypatch):
    device = Device({"a": 60.0, "b": 70.0}, slow_runs=0, slow_by=0.0)
    fastest = tuner(tmp_path, monkeypatch, device)
    out = torch.arange(4.0)

    def launch(config):
        out.add_(1.0)  # the kernel writes its output
        device.launch(config)
    assert fastest("k", ["a", "b"], "b", [out], launch) == "a"
    assert device.runs == ["b", "a", "b", "a"]
    assert torch.equal(out, torch.arange(4.0))


def test_a_configuration_that_fails_is_left_out(tmp_path, monkeypatch):
    device = Device({"a": 2.0, "b": 1.0}, slow_runs=0, slow_by=0.0)
    fastest = tuner(tmp_path, monkeypatch, device)

    def launch(config):
        if config == "b":
            raise RuntimeError("out of shared memory")
        device.launch(config)
    assert fastest("k", ["a", "b"], "b", [torch.ones(1)], launch) == "a"


def test_the_default_runs_in_the_rounds_and_wins_within_three_percent(tmp_path, monkeypatch):
    # "d" is the kernel's default and no candidate; "a" is 2 % faster: not enough to leave it.
    device = Device({"a": 1.0, "b": 1.5, "d": 1.02}, slow_runs=0, slow_by=0.0)
    fastest = tuner(tmp_path, monkeypatch, device)
    assert fastest("k", ["a", "b"], "d", [torch.ones(1)], device.launch) == "d"
    assert device.runs[:3] == ["d", "a", "b"]
    # 5 % faster is a real win.
    device = Device({"a": 1.0, "b": 1.5, "d": 1.05}, slow_runs=0, slow_by=0.0)
    fastest = tuner(tmp_path, monkeypatch, device)
    assert fastest("k", ["a", "b"], "d", [torch.ones(1)], device.launch) == "a"


class NoisyDevice:
    """CUDA-event stand-ins on a clock, and launches whose timed runs (those between a start
    and an end event) take the next of their configuration's scripted times, in turn; other
    launches (compiles, warm-ups) take no time."""

    def __init__(self, times):
        self.times = {config: list(ts) for config, ts in times.items()}
        self.now, self.timing, self.timed = 0.0, False, []
        device = self

        class Event:
            def __init__(self, enable_timing=False):
                self.at = None

            def record(self):
                self.at = device.now
                device.timing = not device.timing  # start, end, start, end...

            def synchronize(self):
                pass

            def elapsed_time(self, end):
                return end.at - self.at

        self.torch = types.SimpleNamespace(cuda=types.SimpleNamespace(Event=Event))

    def launch(self, config):
        if self.timing:
            ts = self.times[config]
            self.now += ts[sum(c == config for c in self.timed) % len(ts)]
            self.timed.append(config)


def noisy(mean, spread, n, seed):
    """n run times around `mean`, each off by up to +-`spread` (a fraction), reproducibly."""
    rng = random.Random(seed)
    return [mean * (1 + rng.uniform(-spread, spread)) for _ in range(n)]


def test_a_noisy_short_kernel_keeps_its_default_unless_a_candidate_is_clearly_faster(
    tmp_path, monkeypatch
):
    # A 0.05 ms kernel whose runs vary by +-6 %. "near" is 1.5 % faster than the default "d"
    # in the same round (+-2 %), and once ran 20 % faster; "jumpy" alternates between 25 %
    # faster and 25 % slower. On each one's fastest run both would beat the default by far.
    d = noisy(0.050, 0.06, 50, seed=1)
    near = [t * r for t, r in zip(d, noisy(0.985, 0.02, 50, seed=2))]
    near[7] = 0.040
    jumpy = [0.0375 if i % 2 else 0.0625 for i in range(50)]
    assert min(near) < 0.97 * min(d) and min(jumpy) < 0.97 * min(d)
    for challenger, runs in (("near", near), ("jumpy", jumpy)):
        device = NoisyDevice({"d": d, challenger: runs})
        fastest = tuner(tmp_path, monkeypatch, device)
        assert fastest("k", [challenger], "d", [torch.ones(1)], device.launch) == "d"
        # 10 ms of runs would be 200 rounds: the cap gives each configuration 50 runs.
        assert device.timed.count("d") == device.timed.count(challenger) == 50
    # A candidate 10 % faster, as noisy, is a real win.
    device = NoisyDevice({"d": d, "near": near, "fast": noisy(0.045, 0.06, 50, seed=3)})
    fastest = tuner(tmp_path, monkeypatch, device)
    assert fastest("k", ["near", "fast"], "d", [torch.ones(1)], device.launch) == "fast"


def test_every_tuning_call_times_the_default_again(tmp_path, monkeypatch):
    # An earlier call chose "x" (best so far). This call tries "y"; timed with the default "d"
    # in the same rounds, neither is 3 % faster than it, so the default is back.
    device = NoisyDevice({"d": [1.0], "x": [0.99], "y": [1.01]})
    mod = generated(tmp_path)
    monkeypatch.setattr(mod, "torch", types.SimpleNamespace(**{**vars(torch), **vars(device.torch)}))
    monkeypatch.setattr(mod, "_appyc_spin", lambda: None)
    best, left = mod._appyc_tune_step("k", "d", "x", ["y"], [torch.ones(1)], device.launch, 1.0)
    assert (best, left) == ("d", [])
    assert set(device.timed) == {"d", "x", "y"}
    # A challenger still clearly faster than the default stays.
    device = NoisyDevice({"d": [1.0], "x": [0.9], "y": [1.01]})
    monkeypatch.setattr(mod, "torch", types.SimpleNamespace(**{**vars(torch), **vars(device.torch)}))
    assert mod._appyc_tune_step("k", "d", "x", ["y"], [torch.ones(1)], device.launch, 1.0) == ("x", [])


@pytest.mark.parametrize("entry", ["(256, 4)", [256], [3, 4], {"mvl": 256}, 7])
def test_a_cached_entry_that_is_no_configuration_is_tuned_again_with_a_warning(
    tmp_path, monkeypatch, entry
):
    mod = generated(tmp_path)
    tuning = mod._AppycTuning("k", "hash", (1024, 4), ((256, 4), (1024, 4)))
    monkeypatch.setattr(mod, "_APPYC_INTERPRET", False)
    monkeypatch.setenv("APPYC_AUTOTUNE", "1")
    monkeypatch.setenv("APPYC_CACHE_DIR", str(tmp_path / "cache"))
    fake_cuda = types.SimpleNamespace(get_device_name=lambda device: "GPU")
    monkeypatch.setattr(mod, "torch", types.SimpleNamespace(cuda=fake_cuda))
    key = (1,)
    table = {f"k|hash|GPU|{key!r}": entry}
    monkeypatch.setattr(mod, "_APPYC_TUNING_FILE", table)
    tuned = []
    monkeypatch.setattr(
        mod, "_appyc_tune_step", lambda *args: tuned.append(args) or ((256, 4), [])
    )
    with pytest.warns(UserWarning, match="ignoring the tuning cache's entry for k"):
        assert tuning.tune(key, [torch.ones(1)], None) == (256, 4)
    assert len(tuned) == 1
    # The new choice replaced the bad entry, in memory and in the file.
    assert table[f"k|hash|GPU|{key!r}"] == [256, 4]
    with open(tmp_path / "cache" / "tuning.json") as f:
        assert json.load(f)[f"k|hash|GPU|{key!r}"] == [256, 4]
    # A valid entry is taken as it is, without a warning or tuning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tuning.tune(key, [torch.ones(1)], None) == (256, 4)
    assert len(tuned) == 1



def tuning_with_clock(tmp_path, monkeypatch, candidates):
    """A generated module's tuner on a fake GPU: every launch takes 0.4 s of a fake clock, and
    each configuration's time is scripted (lower is better)."""
    mod = generated(tmp_path)
    monkeypatch.setattr(mod, "_APPYC_INTERPRET", False)
    monkeypatch.setenv("APPYC_AUTOTUNE", "1")
    monkeypatch.setenv("APPYC_TUNE_BUDGET", "1")
    monkeypatch.setenv("APPYC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(mod, "_APPYC_TUNING_FILE", None)
    clock = [0.0]
    fake_time = types.SimpleNamespace(perf_counter=lambda: clock[0])
    monkeypatch.setattr(mod, "time", fake_time)
    fake_cuda = types.SimpleNamespace(get_device_name=lambda device: "GPU")
    monkeypatch.setattr(mod, "torch", types.SimpleNamespace(cuda=fake_cuda))
    speed = {c: 10.0 - i for i, c in enumerate(candidates)}  # the last is the fastest
    launched = []

    def launch(config):
        launched.append(config)
        clock[0] += 0.4

    # Timing rounds: the scripted speeds, not the clock.
    monkeypatch.setattr(mod, "_appyc_fastest",
                        lambda kernel, timed, default, written, launch: min([default] + timed, key=speed.get))
    return mod, launch, launched


def test_tuning_is_spread_over_calls_within_the_budget_and_resumes_from_the_file(tmp_path, monkeypatch):
    configs = [(1024, 4), (128, 4), (256, 4), (512, 4), (512, 8), (1024, 8)]
    mod, launch, launched = tuning_with_clock(tmp_path, monkeypatch, configs)
    tuning = mod._AppycTuning("k", "hash", (1024, 4), tuple(configs[1:]))
    key = (1,)
    written = [torch.ones(2)]
    # First call: the default alone (a cold call costs its compile, no more).
    assert tuning.tune(key, written, launch) == (1024, 4)
    assert launched == [(1024, 4)]
    # The next call, a while later: candidates while under 1 s, 0.4 s each, so three.
    for _ in range(3):
        launch(None)
    launched.clear()
    assert tuning.tune(key, written, launch) == (512, 4)
    assert launched == [(128, 4), (256, 4), (512, 4)]
    assert key not in tuning.chosen and key in tuning.pending
    with open(tmp_path / "cache" / "tuning.json") as f:
        progress = json.load(f)[f"k|hash|GPU|{key!r}"]
    assert progress == {"best": [512, 4], "left": [[512, 8], [1024, 8]]}
    # A new process resumes from the file: the next candidates, never the default again.
    mod2, launch2, launched2 = tuning_with_clock(tmp_path, monkeypatch, configs)
    tuning2 = mod2._AppycTuning("k", "hash", (1024, 4), tuple(configs[1:]))
    # 0.4 s a launch: both fit under the budget, and that settles it.
    assert tuning2.tune(key, written, launch2) == (1024, 8)
    assert launched2 == [(512, 8), (1024, 8)]
    assert tuning2.chosen[key] == (1024, 8) and key not in tuning2.pending
    with open(tmp_path / "cache" / "tuning.json") as f:
        assert json.load(f)[f"k|hash|GPU|{key!r}"] == [1024, 8]


def test_a_continuing_call_tries_one_candidate_even_past_its_budget(tmp_path, monkeypatch):
    configs = [(1024, 4), (128, 4), (256, 4)]
    mod, launch, launched = tuning_with_clock(tmp_path, monkeypatch, configs)
    monkeypatch.setenv("APPYC_TUNE_BUDGET", "0")
    tuning = mod._AppycTuning("k", "hash", (1024, 4), tuple(configs[1:]))
    key = (2,)
    assert tuning.tune(key, [torch.ones(1)], launch) == (1024, 4)  # the default alone
    assert tuning.tune(key, [torch.ones(1)], launch) == (128, 4)
    assert tuning.tune(key, [torch.ones(1)], launch) == (256, 4)
    assert tuning.chosen[key] == (256, 4)


def test_the_kernels_of_one_call_share_its_budget(tmp_path, monkeypatch):
    """A cold first call of a function of several kernels compiles each default, but only one
    budget of candidates in all: a kernel whose tuning starts right after another's (the same
    call of the user's function) gets what is left of the same window; a later call (after a
    gap) opens a new one."""
    configs = [(1024, 4), (128, 4), (256, 4), (512, 4)]
    mod, launch, launched = tuning_with_clock(tmp_path, monkeypatch, configs)
    first = mod._AppycTuning("first", "hash", (1024, 4), tuple(configs[1:]))
    second = mod._AppycTuning("second", "hash", (1024, 4), tuple(configs[1:]))
    written = [torch.ones(2)]
    for tuning in (first, second):  # cold: the defaults alone, 0.8 s
        tuning.tune((1,), written, launch)
    for _ in range(3):
        launch(None)  # the user's program runs on for 1.2 s without tuning
    launched.clear()
    first.tune((1,), written, launch)
    assert launched == [(128, 4), (256, 4), (512, 4)]  # 0.0 .. 1.2 s: the window is spent
    launched.clear()
    second.tune((1,), written, launch)
    assert launched == [(128, 4)]  # the one candidate owed, no more
    # The next call, a while later: a window of its own, so more than the one candidate owed.
    for _ in range(3):
        launch(None)  # the user's program runs on for 1.2 s without tuning
    launched.clear()
    second.tune((1,), written, launch)
    assert launched == [(256, 4), (512, 4)]


def test_a_call_that_tunes_past_a_second_says_so_once_on_stderr_unless_silenced(tmp_path, monkeypatch, capsys):
    """Issue 23, item 5: a first call that spends more than a second tuning prints one line to
    stderr naming the kernel, the time and the cache; a shorter one prints nothing, and
    APPYC_VERBOSE=0 silences the line."""
    configs = [(1024, 4), (128, 4), (256, 4), (512, 4), (512, 8), (1024, 8)]
    mod, launch, _ = tuning_with_clock(tmp_path, monkeypatch, configs)
    tuning = mod._AppycTuning("k", "hash", (1024, 4), tuple(configs[1:]))
    written = [torch.ones(2)]
    tuning.tune((1,), written, launch)  # the default alone: 0.4 s
    assert capsys.readouterr().err == ""
    for _ in range(3):
        launch(None)
    tuning.tune((1,), written, launch)  # three candidates: 1.2 s
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("appyc: tuned k for 1.2 s in this call")
    assert str(tmp_path / "cache" / "tuning.json") in lines[0] and "APPYC_VERBOSE=0" in lines[0]
    monkeypatch.setenv("APPYC_VERBOSE", "0")
    for _ in range(3):
        launch(None)
    tuning.tune((1,), written, launch)  # the last two candidates: 0.8 s, under a second
    assert capsys.readouterr().err == ""
    quiet = mod._AppycTuning("q", "hash", (1024, 4), tuple(configs[1:]))
    quiet.tune((1,), written, launch)
    for _ in range(3):
        launch(None)
    quiet.tune((1,), written, launch)  # 1.2 s again: the line APPYC_VERBOSE=0 silences
    assert capsys.readouterr().err == ""
