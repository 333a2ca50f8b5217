# Vendored for torchweb's corpus test (tests/test_corpus.py) from https://github.com/spro/char-rnn.pytorch @ 282bcb6, helpers.py
# License: MIT, Copyright (c) 2017 Sean Robertson (full text in tests/corpus/LICENSES.md).
# Unchanged; `import unidecode` resolves to a stub (read_file is not used).

# https://github.com/spro/char-rnn.pytorch

import unidecode
import string
import random
import time
import math
import torch

# Reading and un-unicode-encoding data

all_characters = string.printable
n_characters = len(all_characters)

def read_file(filename):
    file = unidecode.unidecode(open(filename).read())
    return file, len(file)

# Turning a string into a tensor

def char_tensor(string):
    tensor = torch.zeros(len(string)).long()
    for c in range(len(string)):
        try:
            tensor[c] = all_characters.index(string[c])
        except:
            continue
    return tensor

# Readable time elapsed

def time_since(since):
    s = time.time() - since
    m = math.floor(s / 60)
    s -= m * 60
    return '%dm %ds' % (m, s)
