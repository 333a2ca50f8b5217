"""Cases the fuzz found (tests/fuzz_regressions.json), replayed on both devices.

An entry with an "xfail_reason" is a known bug, still there: its test is
xfail(strict=True) on the devices in "xfail_devices" (default: both), so it turns red once the
bug is fixed, which is the reminder to drop the marker (the case then guards the fix). Long fuzz
runs append the failures they find here (tests/fuzz/session.py).
"""

import pytest

from fuzz import session as S
from fuzz.runner import run_case

ENTRIES = S.load_regressions().get("cases", [])


@pytest.mark.parametrize("entry", ENTRIES, ids=[f"{e['id']}-{e['signature'][:60]}" for e in ENTRIES])
def test_regression(device, entry, request):
    if entry.get("xfail_reason") and device in entry.get("xfail_devices", ["cpu", "webgpu"]):
        request.applymarker(pytest.mark.xfail(strict=True, reason=entry["xfail_reason"]))
    out = run_case(entry["case"], device)
    assert not out.failed, out.message


def test_entries_are_well_formed():
    ids = set()
    for e in ENTRIES:
        assert {"id", "signature", "case"} <= set(e), e
        assert e["id"] == S.case_id(e["case"]), f"{e['id']}: the id is the hash of the case"
        assert e["id"] not in ids, f"duplicate case {e['id']}"
        ids.add(e["id"])
        assert set(e.get("xfail_devices", [])) <= {"cpu", "webgpu"}
