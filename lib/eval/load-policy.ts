/** The policy `swerl eval` runs, from where --policy, --model or --server said it comes. */
import path from 'node:path';

import { DecoyPolicy, NoopPolicy, OraclePolicy } from '../agent/scripted-policy.js';
import type { AgentPolicy, ScoringPolicy } from '../types/policy.js';
import type { PolicySource } from './args.js';

export interface LoadedPolicy {
  policy: AgentPolicy;
  /** The same model as a scorer (a judge reads answers' logprobs); none for scripted policies. */
  scorer?: ScoringPolicy;
  /** The default model_name_or_path of the predictions. */
  name: string;
  dispose(): void;
}

const SCRIPTED = { oracle: () => new OraclePolicy(), noop: () => new NoopPolicy(), decoy: (runs: number) => new DecoyPolicy({ every: runs }) };

/** `runs`: the decoy policy plays gold on one run in that many. */
export async function loadPolicy(source: PolicySource, runs = 1): Promise<LoadedPolicy> {
  const dispose = () => undefined as void;
  switch (source.kind) {
    case 'scripted':
      return { policy: SCRIPTED[source.policy](runs), name: `swerl-${source.policy}`, dispose };
    case 'model': {
      const { pinBlasToOneThread } = await import('../native.js');
      pinBlasToOneThread();
      const { NativePolicy } = await import('../model/native-policy.js');
      const native = await NativePolicy.load(source.dir);
      return { policy: native, scorer: native, name: path.basename(path.resolve(source.dir)), dispose: () => native.dispose() };
    }
    case 'server': {
      const { loadTokenizer } = await import('../model/hf-tokenizer.js');
      const { RemotePolicy } = await import('../model/remote-policy.js');
      const remote = await RemotePolicy.connect(await loadTokenizer(source.tokenizer), {
        servers: source.servers,
        protocol: source.protocol,
        ...(source.servedModel ? { model: source.servedModel } : {}),
      });
      return { policy: remote, scorer: remote, name: remote.model ?? path.basename(path.resolve(source.tokenizer)), dispose };
    }
  }
}
