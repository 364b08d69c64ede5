"""trafka.testing.history on histories made by hand: each check finds what it is for and
nothing on a clean history."""

from __future__ import annotations

from trafka.testing.history import History, check_history


def clean_history(records: int = 20) -> History:
    history = History()
    for offset in range(records):
        history.produced("t", 0, offset, b"v%d" % offset)
    for offset in range(records):
        history.consumed("c", "t", 0, offset, b"v%d" % offset)
    for offset in (5, 10, 20):
        history.committed("g", "t", 0, offset)
    return history


def test_a_clean_history_is_ok():
    report = clean_history().check(read_committed=True)
    assert report.ok, report.summary()
    assert (report.acknowledged, report.read) == (20, 20)
    assert not report.unseen and not report.skipped


def test_an_acknowledged_record_nobody_read_past_is_lost_and_one_at_the_end_unseen():
    history = History()
    for offset in range(10):
        history.produced("t", 0, offset, b"v%d" % offset)
    for offset in [0, 1, 2, 4, 5, 6, 7]:  # 3 is gone; 8 and 9 were never reached
        history.consumed("c", "t", 0, offset, b"v%d" % offset)
    report = history.check()
    assert not report.ok
    assert [e["position"] for e in report.lost] == [("t", 0, 3)]
    assert [e["position"] for e in report.unseen] == [("t", 0, 8), ("t", 0, 9)]
    assert report.skipped == [{"consumer": "c", "topic": "t", "partition": 0, "from": 2, "to": 4, "acknowledged_between": 1}]


def test_a_different_value_at_an_acknowledged_offset_is_changed():
    history = clean_history(5)
    history.consumed("d", "t", 0, 2, b"other")
    report = history.check()
    assert [(e["position"], e["read"]) for e in report.changed] == [(("t", 0, 2), b"other")]


def test_one_value_at_two_offsets_is_duplicated():
    report = check_history([(("t", 0, 0), b"a"), (("t", 0, 1), b"a"), (("t", 0, 2), b"b")],
                           {"c": [(("t", 0, 0), b"a"), (("t", 0, 1), b"a"), (("t", 0, 2), b"b")]})
    assert report.duplicated == [{"value": b"a", "positions": [("t", 0, 0), ("t", 0, 1)]}]
    assert not report.ok


def test_a_consumer_going_back_is_out_of_order_and_another_consumer_rereading_is_not():
    history = clean_history(5)
    history.consumed("c", "t", 0, 1, b"v1")  # c again, after 4
    history.consumed("e", "t", 0, 0, b"v0")  # another consumer from the start: fine
    report = history.check()
    assert report.out_of_order == [{"consumer": "c", "topic": "t", "partition": 0, "offset": 1, "after": 4}]


def test_an_aborted_value_read_committed_and_a_commit_going_back():
    history = clean_history(5)
    history.aborted(b"v3")
    history.committed("g", "t", 0, 7)
    assert not history.check().aborted_read  # read_uncommitted may read it
    report = history.check(read_committed=True)
    assert [e["value"] for e in report.aborted_read] == [b"v3"]
    assert report.offsets_went_back == [{"group": "g", "topic": "t", "partition": 0, "offset": 7, "after": 20}]
    assert "aborted_read: 1" in report.summary()
