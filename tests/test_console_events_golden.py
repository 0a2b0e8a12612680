"""Every outcome of `parse_event` pinned: ~31,000 bent events (tests/console_events_corpus.py)
accepted with the same journal record, or refused with the same code and message word for word,
as recorded from the parser of protocol v1 before console events were rebuilt (issue #21)."""

from __future__ import annotations

import json

from tests import console_events_corpus as corpus


def test_every_outcome_of_the_corpus_is_as_recorded() -> None:
    golden = json.loads(corpus.GOLDEN.read_text(encoding="utf-8"))
    got = corpus.record()
    assert got.keys() == golden.keys()
    changed = [
        f"{name}\n  was {golden[name]}\n  now {got[name]}"
        for name in golden
        if got[name] != golden[name]
    ]
    assert not changed, f"{len(changed)} outcomes changed:\n" + "\n".join(changed[:20])


def test_a_mapping_that_is_not_a_dict_gets_the_same_outcome() -> None:
    for name, raw in corpus.cases():
        if isinstance(raw, dict):
            assert corpus.outcome(raw, as_mapping=True) == corpus.outcome(raw), name


def test_the_corpus_covers_every_type_and_every_refusal_kind() -> None:
    golden = json.loads(corpus.GOLDEN.read_text(encoding="utf-8"))
    accepted = {dict(map(tuple, out[1]))["type"] for out in golden.values() if out[0] == "ok"}
    assert len(accepted) == 17
    assert len({out[1] for out in golden.values() if out[0] != "ok"}) > 200
