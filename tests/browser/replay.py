async def replay_cases(cases_json, flt):
    import sys
    from array import array
    from pyodide.ffi import create_proxy
    from torchweb.backends.webgpu import runtime as R
    rt = R.get_runtime()
    words, blob = array("I", [2, 999999]), bytearray(b"1234")
    b0 = sys.getrefcount(words)
    rt.driver._mod.execute(create_proxy(memoryview(words)), create_proxy(memoryview(blob)))
    print("leaky refcount", b0, sys.getrefcount(words))
    rt.driver._mod.execute(memoryview(words), memoryview(blob))
    print("auto refcount", b0, sys.getrefcount(words))
    try:
        blob.extend(b"x"); print("extend ok")
    except BufferError as e:
        print("locked", e)
    return {"passed": 0, "failed": [], "total": 0}
