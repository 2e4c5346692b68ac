"""Tiny random checkpoints in Hugging Face layout, scored by transformers itself.

    python3 test/reference/hf_models.py OUT_DIR

For each family (Qwen3, Qwen3 with YaRN, Qwen2, Llama with llama3 rotary scaling) this builds
a small random model with transformers, with non-trivial norm weights and biases, saves it with
save_pretrained (config.json + model.safetensors, whatever layout the installed transformers
writes), draws token sequences and writes OUT_DIR/reference.json:

  { "transformers": version, "torch": version, "cuda": bool,
    "models": [ { "name", "dir", "sequences": [[ids]],
                  "float64": [[logprob of token t given the tokens before, t >= 1]],
                  "cuda_float32": ..., "cuda_bfloat16": ... } ] }

float64 is transformers' eager forward on the CPU in float64: the reference swerl's NativePolicy
is checked against (test/lib/model/hf-parity.test.ts). The CUDA rows are transformers' own
float32 and bfloat16 (eager attention) forwards, to put swerl's reduced-precision gap next to transformers' own.
"""
import inspect
import json
import os
import sys

import torch
import transformers

VOCAB = 320  # >= the byte tokenizer's 265 ids, which NativePolicy uses when no tokenizer.json
LENGTHS = [40, 7, 64, 120]

FAMILIES = [
    dict(name='qwen3', cls='Qwen3Config', tie=True,
         fields=dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=2, head_dim=32, max_position_embeddings=512),
         rope=dict(rope_type='default', rope_theta=1e6)),
    dict(name='qwen3-yarn', cls='Qwen3Config', tie=True,
         fields=dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=1, head_dim=16, max_position_embeddings=128),
         rope=dict(rope_type='yarn', factor=4.0, original_max_position_embeddings=32, rope_theta=1e6)),
    dict(name='qwen2', cls='Qwen2Config', tie=False,
         fields=dict(hidden_size=64, intermediate_size=160, num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=2, max_position_embeddings=512, use_sliding_window=False),
         rope=dict(rope_type='default', rope_theta=1e4)),
    dict(name='llama', cls='LlamaConfig', tie=False,
         fields=dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=8,
                     num_key_value_heads=4, max_position_embeddings=512),
         rope=dict(rope_type='llama3', factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                   original_max_position_embeddings=32, rope_theta=5e5)),
]


def make_config(spec):
    cls = getattr(transformers, spec['cls'])
    fields = dict(spec['fields'], vocab_size=VOCAB, tie_word_embeddings=spec['tie'], initializer_range=0.1,
                  rms_norm_eps=1e-6, bos_token_id=None, eos_token_id=None, pad_token_id=None)
    rope = dict(spec['rope'])
    if 'rope_parameters' in inspect.signature(cls.__init__).parameters:  # transformers >= 5
        return cls(**fields, rope_parameters=rope)
    theta = rope.pop('rope_theta')
    return cls(**fields, rope_theta=theta, rope_scaling=None if rope['rope_type'] == 'default' else rope)


def next_token_logprobs(model, sequences, device, dtype):
    model = model.to(device=device, dtype=dtype)
    out = []
    with torch.no_grad():
        for seq in sequences:
            ids = torch.tensor([seq], device=device)
            logits = model(input_ids=ids).logits[0].double()
            logp = torch.log_softmax(logits, -1)
            out.append(logp[:-1].gather(-1, ids[0, 1:, None]).squeeze(-1).cpu().tolist())
    return out


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    cuda = torch.cuda.is_available()
    result = dict(transformers=transformers.__version__, torch=torch.__version__, cuda=cuda, models=[])
    for i, spec in enumerate(FAMILIES):
        torch.manual_seed(1000 + i)
        config = make_config(spec)
        model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation='eager').float()
        with torch.no_grad():
            for name, p in model.named_parameters():
                if name.endswith('norm.weight'):
                    p.copy_(1 + 0.3 * torch.randn_like(p))
                elif name.endswith('.bias'):
                    p.copy_(0.2 * torch.randn_like(p))
        model.eval()
        folder = os.path.join(out_dir, spec['name'])
        model.save_pretrained(folder)  # safetensors: the default since transformers 4.35
        g = torch.Generator().manual_seed(2000 + i)
        sequences = [torch.randint(0, VOCAB, (n,), generator=g).tolist() for n in LENGTHS]
        row = dict(name=spec['name'], dir=folder, sequences=sequences,
                   float64=next_token_logprobs(model, sequences, 'cpu', torch.float64))
        if cuda:
            row['cuda_float32'] = next_token_logprobs(model, sequences, 'cuda', torch.float32)
            row['cuda_bfloat16'] = next_token_logprobs(model, sequences, 'cuda', torch.bfloat16)
        result['models'].append(row)
        print(f"{spec['name']}: saved to {folder}", flush=True)
    with open(os.path.join(out_dir, 'reference.json'), 'w') as f:
        json.dump(result, f)


if __name__ == '__main__':
    main(sys.argv[1])
