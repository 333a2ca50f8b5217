"""The differential fuzz of torchweb against PyTorch (see docs/testing.md, "The fuzz").

    values.py       element values per dtype (special values mixed in), JSON float encoding
    case.py         the JSON case format: tensors as a base plus a view chain, other arguments
    catalogue.py    what is fuzzed: the elementwise table's rows and their call forms,
                    operators, in-place forms, reductions, matmul, views and writes
    strategies.py   hypothesis strategies that draw cases, one per family
    compare.py      reading results back and comparing them (the base tolerances)
    tolerances.py   each family's tolerances (sums, var, prod, matmul, pow, gradient chains)
    runner.py       runs a case with torch and with torchweb on a device: an Outcome
    session.py      modes (CI / long), counters, the long mode's collector, regressions file
    replay.py       python -m fuzz.replay <id | group | case JSON>: replay on both devices
    FINDINGS.md     what the fuzz found, with repros
    hostile_files.py  hostile checkpoints and safetensors files (tests/test_loader_fuzz.py)
    bad_inputs.py   the bad-input catalog (tests/test_bad_inputs.py, docs/reliability.md)
"""
