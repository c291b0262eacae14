// Ask a pi extension command for its argument completions, through pi's own extension loader
// (pi's RPC mode has no request for completion). Prints {"items": [...]} or {"errors": [...]}.
//   node pi_complete.mjs PI_DIST AGENT_DIR COMMAND PREFIX
const [piDist, agentDir, command, prefix] = process.argv.slice(2);
const { discoverAndLoadExtensions } = await import(`${piDist}/index.js`);
const loaded = await discoverAndLoadExtensions([], process.cwd(), agentDir);
if (loaded.errors.length > 0) {
	console.log(JSON.stringify({ errors: loaded.errors.map((e) => String(e.error)) }));
	process.exit(1);
}
const extension = loaded.extensions.find((e) => e.commands.has(command));
if (!extension) {
	console.log(JSON.stringify({ errors: [`no extension registers ${command}`] }));
	process.exit(1);
}
const items = await extension.commands.get(command).getArgumentCompletions(prefix);
console.log(JSON.stringify({ items }));
process.exit(0); // the extension's orbmcp process would keep node alive
