// Run first by `npm test`, `npm run build`, `bench` and `prepare`: on a Node older than 24 they
// would fail with a misleading message (node --test: "Could not find test/**/*.test.ts"), so say
// the real cause in one line. Plain old JavaScript, so that any Node can run it.
var major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write('agent-apps needs Node.js \u2265 24 (this is ' + process.version + '): source scripts/node24.sh\n');
  process.exit(1);
}
