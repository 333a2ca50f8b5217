# torch.stft, torch.fft and torch.linalg as programs use them (issue 20): a speech model's
# log-mel front end (stft with a Hann window, power spectrum, mel filterbank, log), an FNO-style
# spectral filter (rfft2, a complex multiply, irfft2), and a Gaussian-process regression
# (cholesky, solve_triangular, the log marginal likelihood and its gradient), plus eigh and svd
# of a small symmetric matrix. No random draws: inputs from formulas.
import math

import torch

# -- log-mel front end (whisper's): 400-point frames, hop 160, 20 mel bins
N_FFT, HOP, SR = 400, 160, 16000
audio = torch.tensor([math.sin(2 * math.pi * 440 * t / SR) + 0.3 * math.sin(2 * math.pi * 1234 * t / SR + 0.5)
                      for t in range(4000)])
stft = torch.stft(audio, N_FFT, HOP, window=torch.hann_window(N_FFT), return_complex=True)
magnitudes = stft[..., :-1].abs() ** 2
freqs = torch.linspace(0, SR / 2, N_FFT // 2 + 1)
centers = torch.linspace(0, SR / 2, 22)
mel = torch.stack([torch.clamp(1 - (freqs - centers[i + 1]).abs() / (centers[1] - centers[0]), min=0)
                   for i in range(20)])
log_spec = torch.clamp(mel @ magnitudes, min=1e-10).log10()
log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
log_spec = (log_spec + 4.0) / 4.0

# -- spectral filter: rfft2 -> complex weights -> irfft2, with a gradient to the real weights
x = torch.tensor([[math.cos(0.3 * r + 0.7 * c) for c in range(16)] for r in range(12)])
w_re = torch.tensor([[0.5 + 0.1 * math.sin(r + c) for c in range(9)] for r in range(12)], requires_grad=True)
w_im = torch.tensor([[0.2 * math.cos(r - c) for c in range(9)] for r in range(12)], requires_grad=True)
spec = torch.fft.rfft2(x)
y = torch.fft.irfft2(spec * torch.complex(w_re, w_im), s=x.shape)
y.square().sum().backward()

# -- Gaussian-process regression: RBF kernel, Cholesky, triangular solves
xs = torch.linspace(-2, 2, 12).unsqueeze(1)
ys = torch.sin(3 * xs).squeeze(1)
log_ls = torch.tensor(-0.5, requires_grad=True)
K = torch.exp(-0.5 * (xs - xs.T) ** 2 / torch.exp(log_ls) ** 2) + 0.05 * torch.eye(12)
L = torch.linalg.cholesky(K)
alpha = torch.linalg.solve_triangular(L.T, torch.linalg.solve_triangular(L, ys.unsqueeze(1), upper=False), upper=True)
nll = 0.5 * (ys.unsqueeze(1) * alpha).sum() + torch.log(torch.diagonal(L)).sum() + 6 * math.log(2 * math.pi)
nll.backward()
x_test = torch.tensor([[0.25], [1.1]])
k_star = torch.exp(-0.5 * (x_test - xs.T) ** 2 / torch.exp(log_ls.detach()) ** 2)
mean = (k_star @ alpha.detach()).squeeze(1)

# -- eigh / svd / solve / det of a small matrix
A = torch.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
evals = torch.linalg.eigvalsh(A)
svals = torch.linalg.svdvals(A @ torch.tensor([[1.0, 2.0], [0.5, -1.0], [0.0, 1.0]]))
sol = torch.linalg.solve(A, torch.tensor([1.0, 2.0, 3.0]))

result = {
    "log_spec": log_spec.flatten()[::7].tolist(), "log_spec_shape": list(log_spec.shape),
    "spectral_out": y.flatten()[::5].tolist(), "grad_w_re": w_re.grad.flatten()[::4].tolist(),
    "grad_w_im": w_im.grad.flatten()[::4].tolist(),
    "gp_nll": nll.item(), "gp_grad": log_ls.grad.item(), "gp_mean": mean.tolist(),
    "eigvalsh": evals.tolist(), "svdvals": svals.tolist(), "solve": sol.tolist(), "det": torch.linalg.det(A).item(),
}
