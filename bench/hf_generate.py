"""transformers' generate on a random Qwen3-0.6B-shaped model: the baseline bench/policy-cuda.ts
puts beside swerl's native generation, run in the same benchmark on the same GPU.

    python3 bench/hf_generate.py OUT.json --batches 1,16,64 --prompt 128 --new 128 --repeats 3

Sampling at temperature 1 with no top-k/top-p (what RL rollouts use), every request forced to its
full length (min_new_tokens), bf16 weights, transformers' default attention and cache. Times are
the median wall seconds of whole generate() calls after one warm-up.
"""
import argparse
import json
import time

import torch
import transformers

QWEN3_06B = dict(vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                 num_attention_heads=16, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
                 rms_norm_eps=1e-6, tie_word_embeddings=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('out')
    ap.add_argument('--batches', default='1,16,64')
    ap.add_argument('--prompt', type=int, default=128)
    ap.add_argument('--new', type=int, default=128)
    ap.add_argument('--repeats', type=int, default=3)
    a = ap.parse_args()
    torch.manual_seed(0)
    config = transformers.Qwen3Config(**QWEN3_06B)
    model = transformers.AutoModelForCausalLM.from_config(config).to(device='cuda', dtype=torch.bfloat16).eval()
    rows = []
    for batch in [int(b) for b in a.batches.split(',')]:
        ids = torch.randint(0, QWEN3_06B['vocab_size'], (batch, a.prompt), device='cuda')
        mask = torch.ones_like(ids)

        def run():
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=a.new, min_new_tokens=a.new,
                                 do_sample=True, temperature=1.0, top_k=0, top_p=1.0, pad_token_id=0)
            torch.cuda.synchronize()
            assert out.shape == (batch, a.prompt + a.new), out.shape
            return time.perf_counter() - t0

        run()
        times = sorted(run() for _ in range(a.repeats))
        seconds = times[len(times) // 2]
        rows.append(dict(batch=batch, promptTokens=a.prompt, newTokens=a.new, seconds=seconds, times=times,
                         tokensPerSecond=batch * a.new / seconds))
        print(f"transformers.generate batch {batch:3d}: {batch * a.new / seconds:9.1f} tokens/s", flush=True)
    with open(a.out, 'w') as f:
        json.dump(dict(transformers=transformers.__version__, torch=torch.__version__,
                       device=torch.cuda.get_device_name(), rows=rows), f, indent=1)


if __name__ == '__main__':
    main()
