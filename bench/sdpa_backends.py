# Scaled dot-product attention on the policy's shapes (Qwen3-0.6B: 16 query heads, 8 key/value
# heads of 128; 4 x 4096 and 1 x 16384 tokens), bf16, causal: forward and forward + backward by
# backend (flash, memory-efficient, cuDNN), GQA in place (enable_gqa) or keys and values repeated
# to every query head. Usage (a GPU machine): python3 bench/sdpa_backends.py OUT.json
import json, os, sys, torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
torch.manual_seed(0)
rows = []
def timed(fn, reps=10):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(reps): fn()
    b.record(); torch.cuda.synchronize()
    return a.elapsed_time(b) / reps
for B, T in [(4, 4096), (1, 16384)]:
    q = torch.randn(B, 16, T, 128, device='cuda', dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(B, 8, T, 128, device='cuda', dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(B, 8, T, 128, device='cuda', dtype=torch.bfloat16, requires_grad=True)
    g = torch.randn(B, 16, T, 128, device='cuda', dtype=torch.bfloat16)
    for name, backend in [('flash', SDPBackend.FLASH_ATTENTION), ('efficient', SDPBackend.EFFICIENT_ATTENTION), ('cudnn', SDPBackend.CUDNN_ATTENTION)]:
        for gqa in [True, False]:
            def fwd():
                with sdpa_kernel([backend]):
                    if gqa: return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
                    return F.scaled_dot_product_attention(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), is_causal=True)
            try:
                f = timed(lambda: fwd())
                fb = timed(lambda: torch.autograd.grad(fwd(), (q, k, v), g))
                flops = 4 * B * T * T * 128 * 16 / 2
                row = dict(B=B, T=T, backend=name, gqa_in_place=gqa, fwd_ms=f, fwd_bwd_ms=fb, bwd_ms=fb - f,
                           fwd_tflops=flops / f / 1e9, bwd_tflops=2.5 * flops / (fb - f) / 1e9)
            except Exception as e:
                row = dict(B=B, T=T, backend=name, gqa_in_place=gqa, error=str(e)[:200])
            print(row, flush=True); rows.append(row)
json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__, rows=rows), open(sys.argv[1], 'w'), indent=1)
