// The viewer's JSON API (lib/view/api.ts).

export async function getJson(path) {
  const response = await fetch(path, { cache: 'no-store' });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.error ?? `${path}: HTTP ${response.status}`);
  return body;
}

export const api = {
  runs: () => getJson('/api/runs'),
  metrics: (run) => getJson(`/api/runs/${run}/metrics`),
  steps: (run) => getJson(`/api/runs/${run}/steps`),
  step: (run, step) => getJson(`/api/runs/${run}/steps/${step}`),
  trajectory: (run, step, index) => getJson(`/api/runs/${run}/steps/${step}/trajectories/${index}`),
  evals: (run) => getJson(`/api/runs/${run}/evals`),
  evalReport: (run, path) => getJson(`/api/runs/${run}/eval?path=${encodeURIComponent(path)}`),
};
