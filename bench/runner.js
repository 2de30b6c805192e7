// The shape every bench module shares: `run(names)` runs those of its benchmarks that `names`
// asks for (all when empty), printing one JSON line each, and the module runs itself when it is
// the script (`node bench/x.js [NAME…]`).
import { pathToFileURL } from 'node:url';

/** `benches`: name → async () => record. Returns the module's `run(names)`. */
export function benchRunner(benches) {
  const all = Object.keys(benches);
  return async function run(names = []) {
    const wanted = names.length ? all.filter((n) => names.includes(n)) : all;
    const records = [];
    for (const name of wanted) {
      const rec = await benches[name]();
      console.log(JSON.stringify(rec));
      records.push(rec);
    }
    return records;
  };
}

/** Runs `run` with the command line's names when `moduleUrl` is the script node was started with. */
export async function runIfMain(moduleUrl, run) {
  if (process.argv[1] && moduleUrl === pathToFileURL(process.argv[1]).href) await run(process.argv.slice(2));
}
