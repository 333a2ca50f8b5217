"""The constants both backends' rejection samplers share (backends/cpu_samplers.py and
backends/webgpu/kernels/samplers.py run the same steps)."""

MAX_ROUNDS = 4096      # past this an element is NaN (no parameter of the domain gets near it)
PTRS_MIN_RATE = 10.0   # Poisson: Knuth's product below, PTRS at and above (PyTorch's split)
BTRS_MIN_MEAN = 10.0   # Binomial: inversion below n min(p, 1 - p), BTRS at and above
# log k!, k = 0..9 (Poisson's log pmf below Stirling's range)
LOG_FACTORIAL = (0.0, 0.0, 0.6931471805599453, 1.791759469228055, 3.1780538303479458, 4.787491742782046,
                 6.579251212010101, 8.525161361065415, 10.60460290274525, 12.801827480081469)
# log k! - ((k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2), k = 0..9 (PyTorch's BTRS table)
STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                 0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                 0.00925546218271273, 0.00833056343336287)
