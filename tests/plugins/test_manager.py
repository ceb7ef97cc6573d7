"""The plugin manager: built-ins, entry points (real dist-info), broken plugins, switches, adapter cache."""

from __future__ import annotations

import inspect
import sys
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pluggy
import pytest

from summaryguard.guard import (
    Checkpoint,
    CheckpointFacts,
    Summary,
    SummaryReconciliationError,
    UnsupportedCheckpointError,
    check_resume,
    resume_guard,
)
from summaryguard.guard.check import adapter_for
from summaryguard.plugins import (
    PluginLoadError,
    PluginLoadWarning,
    get_plugin_manager,
    hookimpl,
    hookspecs,
    plugin_errors,
    register,
    reset_plugin_manager,
    unregister,
)
from summaryguard.plugins import manager as manager_module

# -- a real distribution with entry points, on sys.path ----------------------------------

MODULES = {
    "sgplug_good": """
        from summaryguard.plugins import hookimpl

        IMPORTS = globals().setdefault("IMPORTS", 0) + 1

        class Ticket:
            '''A framework's checkpoint object that no built-in adapter reads.'''
            def __init__(self, step, gen):
                self.step, self.gen = step, gen

        class TicketAdapter:
            name = "ticket"
            def extract(self, cp):
                return (cp.step, cp.gen, True, cp.gen, False, frozenset())
            def next_turn_deps(self, cp):
                return ()
            def drop_manifest(self, cp):
                return ()

        @hookimpl
        def summaryguard_checkpoint_adapter(checkpoint_type, checkpoint):
            return TicketAdapter() if checkpoint_type is Ticket else None

        @hookimpl
        def summaryguard_vocabulary():
            return {"resume-calls": ["ticketing.resume"]}
    """,
    "sgplug_badhook": """
        from summaryguard.plugins import hookimpl

        @hookimpl
        def summaryguard_no_such_hook():
            return 1
    """,
    "sgplug_badargs": """
        from summaryguard.plugins import hookimpl

        class Plugin:
            @hookimpl
            def summaryguard_observe_violation(self, error, checkpoint, severity):
                pass
    """,
    "sgplug_crash": """
        raise RuntimeError("plugin import exploded")
    """,
}

ENTRY_POINTS = """
[summaryguard]
good = sgplug_good
missing = sgplug_not_installed
badhook = sgplug_badhook
badargs = sgplug_badargs:Plugin
crash = sgplug_crash

[some.other.group]
ignored = sgplug_not_installed
"""

BROKEN = {"missing", "badhook", "badargs", "crash"}


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A site directory holding a distribution 'sgplug' with five entry points."""
    for name, source in MODULES.items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    dist = tmp_path / "sgplug-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: sgplug\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(ENTRY_POINTS)
    monkeypatch.delenv(manager_module.DISABLE_AUTOLOAD_ENV, raising=False)
    monkeypatch.delenv(manager_module.BLOCK_ENV, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    reset_plugin_manager()
    yield tmp_path
    reset_plugin_manager()
    for name in MODULES:
        sys.modules.pop(name, None)


def load_quietly() -> tuple[pluggy.PluginManager, list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        manager = get_plugin_manager()
    return manager, [w for w in caught if issubclass(w.category, PluginLoadWarning)]


# -- built-ins -------------------------------------------------------------------------


def test_builtins_are_registered_through_the_same_manager() -> None:
    manager = get_plugin_manager()
    for name in manager_module.BUILTIN_PLUGINS:
        assert manager.get_plugin(name) is sys.modules[name]
    assert manager.get_plugin(manager_module.BUILTIN_PLUGINS[0]) is not None
    assert get_plugin_manager() is manager  # built once


def test_every_hookspec_is_documented() -> None:
    specs = [f for name, f in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("summaryguard_")]
    assert {f.__name__ for f in specs} >= {
        "summaryguard_checkpoint_adapter",
        "summaryguard_observe_violation",
        "summaryguard_resolve_violation",
        "summaryguard_divergence_accepted",
        "summaryguard_vocabulary",
        "summaryguard_lint_rules",
    }
    assert all(inspect.getdoc(f) for f in specs)


# -- entry points ----------------------------------------------------------------------


def test_entry_points_load_lazily_once_and_broken_ones_are_reported(site: Path) -> None:
    assert "sgplug_good" not in sys.modules  # nothing loaded before first use
    manager, caught = load_quietly()
    good = sys.modules["sgplug_good"]
    assert manager.get_plugin("good") is good
    assert get_plugin_manager() is manager and good.IMPORTS == 1

    # every broken plugin: not registered, one warning, one error record; the host goes on
    for name in BROKEN:
        assert manager.get_plugin(name) is None
    errors = {e.name: e for e in plugin_errors()}
    assert set(errors) == BROKEN
    assert errors["missing"] == PluginLoadError(
        "missing", "sgplug_not_installed", "ModuleNotFoundError: No module named 'sgplug_not_installed'"
    )
    assert errors["crash"].error == "RuntimeError: plugin import exploded"
    assert errors["badhook"].error.startswith("PluginValidationError")
    assert "summaryguard_no_such_hook" in errors["badhook"].error
    assert errors["badargs"].value == "sgplug_badargs:Plugin"
    assert "severity" in errors["badargs"].error
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == len(BROKEN)
    assert "summaryguard: plugin 'crash' (sgplug_crash) was not loaded: RuntimeError: plugin import exploded" in messages

    # the good plugin works: its adapter reads its framework's object, its vocabulary is there
    ticket = good.Ticket(step=5, gen=2)
    check_resume(ticket, [])
    assert adapter_for(ticket).name == "ticket"
    assert {"resume-calls": ["ticketing.resume"]} in manager.hook.summaryguard_vocabulary()
    assert plugin_errors() is not plugin_errors()  # a copy each time


@pytest.mark.parametrize("value", ["1", "true", "YES", " on "])
def test_autoload_can_be_disabled(site: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(manager_module.DISABLE_AUTOLOAD_ENV, value)
    manager, caught = load_quietly()
    assert manager.get_plugin("good") is None
    assert caught == [] and plugin_errors() == []
    assert "sgplug_good" not in sys.modules
    assert manager.get_plugin(manager_module.BUILTIN_PLUGINS[0]) is not None


@pytest.mark.parametrize("value", ["0", "", "false", "no"])
def test_autoload_stays_on_otherwise(site: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(manager_module.DISABLE_AUTOLOAD_ENV, value)
    manager, _ = load_quietly()
    assert manager.get_plugin("good") is not None


def test_blocked_plugins_are_never_imported(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(manager_module.BLOCK_ENV, " good, crash ,,missing,badhook,badargs")
    manager, caught = load_quietly()
    assert caught == [] and plugin_errors() == []
    assert "sgplug_good" not in sys.modules and "sgplug_crash" not in sys.modules
    assert manager.is_blocked("good") and manager.is_blocked("crash")
    with pytest.raises(ValueError, match="plugin name 'good' is blocked"):
        register(SimpleNamespace(), name="good")  # a blocked name stays blocked


@pytest.mark.parametrize("autoload", ["0", "1"])
def test_a_blocked_builtin_stays_out_with_or_without_autoload(monkeypatch: pytest.MonkeyPatch, autoload: str) -> None:
    import types

    logging_plugin = "summaryguard.plugins.observe_logging"
    monkeypatch.setenv(manager_module.DISABLE_AUTOLOAD_ENV, autoload)
    monkeypatch.setenv(manager_module.BLOCK_ENV, f"{logging_plugin},mymod")
    reset_plugin_manager()
    manager = get_plugin_manager()
    assert manager.get_plugin(logging_plugin) is None and manager.is_blocked(logging_plugin)
    assert manager.get_plugin(manager_module.BUILTIN_PLUGINS[0]) is not None  # the others stay
    with pytest.raises(ValueError, match="plugin name 'mymod' is blocked"):
        register(types.ModuleType("mymod"))  # named after the module, as pluggy names it


def test_block_one_load_the_rest(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(manager_module.BLOCK_ENV, "crash")
    manager, caught = load_quietly()
    assert manager.get_plugin("good") is not None
    assert {e.name for e in plugin_errors()} == BROKEN - {"crash"}
    assert len(caught) == len(BROKEN) - 1


# -- register / unregister -------------------------------------------------------------


def test_register_and_unregister_notify_listeners() -> None:
    calls: list[str] = []
    get_plugin_manager()  # built already: building notifies too
    manager_module.on_plugins_changed(lambda: calls.append("changed"))
    try:
        plugin = SimpleNamespace()
        name = register(plugin, name="empty-plugin")
        assert name == "empty-plugin" and get_plugin_manager().get_plugin(name) is plugin
        unregister(plugin)
        assert get_plugin_manager().get_plugin(name) is None
        reset_plugin_manager()
        assert calls == ["changed"] * 3
    finally:
        manager_module._listeners.pop()


def test_registering_a_broken_plugin_raises_and_leaves_nothing_behind() -> None:
    class Unknown:
        @hookimpl
        def summaryguard_no_such_hook(self) -> None:
            pass

    class WrongArgs:
        @hookimpl
        def summaryguard_checkpoint_adapter(self, checkpoint_type: type, checkpoint: Any, strict: bool) -> None:
            pass

    for plugin in (Unknown(), WrongArgs()):
        with pytest.raises(pluggy.PluginValidationError):
            register(plugin, name="broken")
        assert get_plugin_manager().get_plugin("broken") is None
    fine = SimpleNamespace()
    register(fine, name="fine")  # the manager still takes plugins
    with pytest.raises(ValueError):
        register(fine, name="fine-again")  # a duplicate is refused and the original stays
    assert get_plugin_manager().get_plugin("fine") is fine
    unregister(name="fine")


# -- adapters through the manager ------------------------------------------------------


class Snapshot:
    """Looks like the seed's checkpoint to the attributes adapter."""

    def __init__(self, refs: list[str]) -> None:
        self.turn = 4
        self.summary_generation = 1
        self.summary = SimpleNamespace(generation=1, partial=False, verbatim_refs=set())
        self.handles = refs  # where this framework really keeps its verbatim refs


class SnapshotAdapter:
    name = "snapshot"

    def extract(self, cp: Snapshot) -> CheckpointFacts:
        return CheckpointFacts(cp.turn, cp.summary_generation, True, cp.summary.generation, False, frozenset(cp.handles))

    def next_turn_deps(self, cp: Snapshot) -> tuple[str, ...]:
        return ()

    def drop_manifest(self, cp: Snapshot) -> tuple[Any, ...]:
        return ()


class SnapshotPlugin:
    @hookimpl
    def summaryguard_checkpoint_adapter(self, checkpoint_type: type, checkpoint: Any) -> Any:
        if issubclass(checkpoint_type, (Snapshot, dict, Checkpoint)):
            return SnapshotAdapter()
        return None


def test_adapter_cache_follows_plugin_changes() -> None:
    snapshot = Snapshot(["h1"])

    @resume_guard(deps="deps")
    def resume(checkpoint: Any, deps: Any) -> str:
        return "resumed"

    assert adapter_for(snapshot).name == "attributes"
    with pytest.raises(SummaryReconciliationError):
        resume(snapshot, ["h1"])  # the generic reader cannot see the handles
    plugin = SnapshotPlugin()
    register(plugin)
    assert adapter_for(snapshot).name == "snapshot"
    assert resume(snapshot, ["h1"]) == "resumed"
    unregister(plugin)
    assert adapter_for(snapshot).name == "attributes"
    register(plugin)
    assert adapter_for(snapshot).name == "snapshot"
    reset_plugin_manager()  # a rebuilt manager has none of the test's plugins
    assert adapter_for(snapshot).name == "attributes"


@pytest.mark.parametrize(
    "checkpoint",
    [
        Snapshot(["h1"]),
        {"summary": None, "turn": 1},
        Checkpoint(turn=1, summary=Summary(generation=1), summary_generation=1),
    ],
    ids=["attribute-object", "mapping", "native"],
)
def test_a_third_party_adapter_wins_over_the_builtins(use_plugin, checkpoint) -> None:
    use_plugin(SnapshotPlugin())
    assert adapter_for(checkpoint).name == "snapshot"


class Opaque:
    pass


@pytest.mark.parametrize(
    ("checkpoint", "type_name"),
    [(Opaque(), f"{__name__}.Opaque"), ({"turn": 3}, "builtins.dict"), (None, "builtins.NoneType")],
)
def test_an_object_no_adapter_understands(checkpoint, type_name) -> None:
    @resume_guard
    def resume(checkpoint: Any) -> None:
        raise AssertionError("must not run")

    for call in (lambda: check_resume(checkpoint, []), lambda: resume(checkpoint)):
        with pytest.raises(UnsupportedCheckpointError) as info:
            call()
        assert info.value.type_name == type_name
        assert f"type {type_name}:" in str(info.value)
        assert "Register an adapter" in str(info.value)


def test_a_crashing_adapter_hook_fails_closed_with_a_reconciliation_error(use_plugin) -> None:
    from summaryguard.guard import ReconciliationKind, SummaryReconciliationError, check_resume

    class Crashing:
        @hookimpl
        def summaryguard_checkpoint_adapter(self, checkpoint_type: type, checkpoint: Any) -> Any:
            raise RuntimeError("plugin bug")

    class Odd:
        pass

    use_plugin(Crashing())
    with pytest.raises(SummaryReconciliationError) as info:
        check_resume(Odd(), [])
    assert info.value.kind is ReconciliationKind.NO_SUMMARY
    assert "hook raised RuntimeError: plugin bug for a Odd" in info.value.reason
    assert isinstance(info.value.__cause__, RuntimeError)


def test_a_crashing_resolver_leaves_the_reconciliation_error_standing(use_plugin, make_checkpoint) -> None:
    from summaryguard.guard import ReconciliationKind, SummaryReconciliationError, resume_guard

    class Crashing:
        @hookimpl
        def summaryguard_resolve_violation(self, error: Any, checkpoint: Any) -> Any:
            raise RuntimeError("resolver bug")

    use_plugin(Crashing())

    @resume_guard
    def resume(checkpoint: Any) -> str:
        return "ran"

    with pytest.raises(SummaryReconciliationError) as info:
        resume(make_checkpoint("native", recorded=9))
    assert info.value.kind is ReconciliationKind.GENERATION_MISMATCH
    assert info.value.details["resolver_error"] == "RuntimeError: resolver bug"
    assert isinstance(info.value.__cause__, RuntimeError)


# -- the built-ins asked without pluggy (a dismissed file's run builds no manager) --------

COLLECTING_HOOKS = ("summaryguard_vocabulary", "summaryguard_frameworks")


@pytest.fixture
def unbuilt(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No manager built yet, the environment's switches cleared."""
    monkeypatch.delenv(manager_module.DISABLE_AUTOLOAD_ENV, raising=False)
    monkeypatch.delenv(manager_module.BLOCK_ENV, raising=False)
    reset_plugin_manager()
    yield
    reset_plugin_manager()


def test_every_room_answers_with_its_model(unbuilt: None) -> None:
    answers = manager_module.builtin_answers("summaryguard_frameworks") or []
    assert {"langgraph", "openai-agents", "pydantic-ai"} <= {model["name"] for answer in answers for model in answer}


@pytest.mark.parametrize("hook", COLLECTING_HOOKS)
def test_the_builtins_answer_as_the_manager_does(unbuilt: None, hook: str) -> None:
    direct = manager_module.builtin_answers(hook)
    assert direct is not None
    assert manager_module._manager is None  # asking the built-ins builds nothing
    assert direct == getattr(get_plugin_manager().hook, hook)()  # same answers, in pluggy's order


def test_the_builtins_with_rules_are_the_managers(unbuilt: None) -> None:
    direct = manager_module.builtin_plugins_with("summaryguard_lint_rules")
    impls = get_plugin_manager().hook.summaryguard_lint_rules.get_hookimpls()
    assert direct is not None and direct == [impl.plugin for impl in impls]


def test_the_manager_answers_once_it_is_built(unbuilt: None, use_plugin: Any) -> None:
    class Extra:
        @hookimpl
        def summaryguard_vocabulary(self) -> dict[str, list[str]]:
            return {"tool-calls": ["extra.fetch"]}

    use_plugin(Extra())
    assert manager_module.builtin_answers("summaryguard_vocabulary") is None
    assert manager_module.builtin_plugins_with("summaryguard_lint_rules") is None


def test_an_installed_plugin_sends_the_question_to_the_manager(site: Path) -> None:
    assert manager_module.builtin_answers("summaryguard_vocabulary") is None
    assert "sgplug_good" not in sys.modules  # deciding so loads no plugin


def test_without_autoload_an_installed_plugin_does_not_count(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(manager_module.DISABLE_AUTOLOAD_ENV, "1")
    direct = manager_module.builtin_answers("summaryguard_vocabulary")
    assert direct is not None and {"resume-calls": ["ticketing.resume"]} not in direct
    assert direct == get_plugin_manager().hook.summaryguard_vocabulary()


def test_a_blocked_builtin_is_not_asked(unbuilt: None, monkeypatch: pytest.MonkeyPatch) -> None:
    room = "summaryguard.plugins.langgraph.plugin"
    monkeypatch.setenv(manager_module.BLOCK_ENV, room)
    names = [m["name"] for answer in manager_module.builtin_answers("summaryguard_frameworks") or () for m in answer]
    assert "langgraph" not in names and "langchain" in names
    assert room not in [m.__name__ for m in manager_module.builtin_plugins_with("summaryguard_lint_rules") or ()]


def test_a_vocabulary_and_the_codes_are_the_same_asked_either_way(unbuilt: None) -> None:
    from summaryguard.rules.engine.registry import known_codes
    from summaryguard.rules.engine.vocabulary import Vocabulary

    direct, codes = Vocabulary.build(), known_codes()
    assert manager_module._manager is None
    get_plugin_manager()
    assert Vocabulary.build() == direct and known_codes() == codes
    assert "SG203" in codes.codes  # the LangGraph room's own rule, found by its file name


# -- the markers: summaryguard's own, read by pluggy's manager ------------------------------


def test_marker_options_reach_pluggy(use_plugin: Any) -> None:
    calls: list[str] = []

    class Late:
        @hookimpl(trylast=True)
        def summaryguard_vocabulary(self) -> dict[str, list[str]]:
            calls.append("late")
            return {}

    class Early:
        @hookimpl(tryfirst=True)
        def summaryguard_vocabulary(self) -> dict[str, list[str]]:
            calls.append("early")
            return {}

    use_plugin(Early())
    use_plugin(Late())  # registered last, so pluggy would call it first but for the options
    get_plugin_manager().hook.summaryguard_vocabulary()
    assert calls.index("early") < calls.index("late")


def test_pluggys_own_marker_still_registers(use_plugin: Any) -> None:
    pluggy_marker = pluggy.HookimplMarker(hookspecs.PROJECT_NAME)

    class ThirdParty:
        @pluggy_marker
        def summaryguard_vocabulary(self) -> dict[str, list[str]]:
            return {"tool-calls": ["thirdparty.fetch"]}

    use_plugin(ThirdParty())
    assert {"tool-calls": ["thirdparty.fetch"]} in get_plugin_manager().hook.summaryguard_vocabulary()


def test_an_unknown_marker_option_fails_where_it_is_written() -> None:
    with pytest.raises(TypeError, match="unknown hook option.*firstresult"):
        hookimpl(firstresult=True)
    with pytest.raises(TypeError, match="unknown hook option.*tryfirst"):
        hookspecs.hookspec(tryfirst=True)


def test_an_unmarked_function_is_no_hook(use_plugin: Any) -> None:
    class Unmarked:
        def summaryguard_vocabulary(self) -> dict[str, list[str]]:
            return {"tool-calls": ["unmarked.fetch"]}

        summaryguard_frameworks = "not a routine"

    use_plugin(Unmarked())
    assert {"tool-calls": ["unmarked.fetch"]} not in get_plugin_manager().hook.summaryguard_vocabulary()


def test_no_builtin_orders_or_wraps_a_collecting_hook() -> None:
    """What ``builtin_answers`` relies on to give pluggy's order without pluggy."""
    import importlib

    from summaryguard.plugins.markers import IMPL_ATTRIBUTE, marked_options

    for name in manager_module.BUILTIN_PLUGINS:
        module = importlib.import_module(name)
        for hook in (*COLLECTING_HOOKS, "summaryguard_lint_rules"):
            options = marked_options(getattr(module, hook, None), IMPL_ATTRIBUTE)
            assert options in (None, {}), (name, hook, options)


def test_an_attribute_that_raises_marks_nothing() -> None:
    from summaryguard.plugins.markers import IMPL_ATTRIBUTE, marked_options

    class Exploding:
        def __getattr__(self, name: str) -> object:
            raise RuntimeError(name)

    assert marked_options(Exploding(), IMPL_ATTRIBUTE) is None
    assert marked_options(hookimpl(lambda: None), IMPL_ATTRIBUTE) == {}


def test_a_plain_pluggy_manager_reads_the_markers_too() -> None:
    """A plugin's own tests may build ``pluggy.PluginManager("summaryguard")`` with our specs."""
    plain = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    plain.add_hookspecs(hookspecs)
    calls: list[str] = []

    class Late:
        @hookimpl(trylast=True)
        def summaryguard_vocabulary(self) -> dict[str, list[str]]:
            calls.append("late")
            return {"tool-calls": ["late.fetch"]}

    class Early:
        @hookimpl(tryfirst=True)
        def summaryguard_vocabulary(self) -> dict[str, list[str]]:
            calls.append("early")
            return {"tool-calls": ["early.fetch"]}

    plain.register(Early())
    plain.register(Late())
    assert plain.hook.summaryguard_vocabulary() == [{"tool-calls": ["early.fetch"]}, {"tool-calls": ["late.fetch"]}]
    assert calls == ["early", "late"]
    assert plain.hook.summaryguard_checkpoint_adapter.spec.opts["firstresult"] is True
