# Stand-ins for whisper's decoding and transcription modules, which whisper/model.py imports to
# attach as methods; the corpus test runs the model's forward pass, never these.
def decode(*args, **kwargs):
    raise NotImplementedError("whisper decoding is not vendored in the corpus")


detect_language = transcribe = decode
