// orbmcp-integrate: managed file. Written by `orbmcp integrate pi`; rewritten by it on upgrade and
// deleted by `orbmcp integrate pi --remove`. Edit a copy under another name to customise it.
//
// /mcp and its subcommands in pi, from orbmcp's own command list. One `orbmcp slash --stdio`
// process per pi session speaks orbmcp's agent protocol (JSON lines, version 1): it lists the
// commands, completes their arguments, runs them (output as pi messages, images included; errors as
// notifications) and asks pi's dialogs when a server asks the user something.

import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

// The orbmcp that wrote this file (its absolute path), so pi needs no orbmcp on its PATH.
const ORBMCP: string[] = @ORBMCP_ARGV@;
const PROTOCOL = 1;
const START_TIMEOUT_MS = 30_000;
const LIST_TIMEOUT_MS = 30_000;
const COMPLETE_TIMEOUT_MS = 5_000;
const MAX_COMPLETIONS = 200;

type Json = Record<string, any>;
type Ctx = any; // pi's ExtensionCommandContext: ui.select/confirm/input/notify

interface Waiter {
	resolve: (message: Json) => void;
	reject: (error: Error) => void;
}

/** The `orbmcp slash --stdio` process of this session: requests by id, questions routed to the
 * run that caused them. Started on first use, again after it ended. */
class Orbmcp {
	private proc: ChildProcess | null = null;
	private ready: Promise<Json> | null = null;
	private waiters = new Map<string, Waiter>();
	private runs = new Map<string, Ctx>();
	private asks = new Map<string, AbortController>();
	private seq = 0;

	start(): Promise<Json> {
		if (this.ready) return this.ready;
		this.ready = new Promise<Json>((resolve, reject) => {
			const [command, ...args] = ORBMCP;
			const proc = spawn(command, [...args, "slash", "--stdio"], {
				stdio: ["pipe", "pipe", "pipe"],
				env: process.env,
			});
			this.proc = proc;
			const timer = setTimeout(() => reject(new Error(`orbmcp did not start within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
			let stderr = "";
			proc.stderr?.on("data", (chunk: Buffer) => {
				stderr = (stderr + chunk.toString("utf8")).slice(-2000);
			});
			proc.on("error", (error: Error) => {
				clearTimeout(timer);
				reject(new Error(`cannot run orbmcp (${ORBMCP.join(" ")}): ${error.message}`));
			});
			proc.on("exit", (code: number | null) => {
				clearTimeout(timer);
				const why = new Error(`orbmcp ended (exit ${code})${stderr.trim() ? `: ${stderr.trim().split("\n").pop()}` : ""}`);
				reject(why);
				this.ended(why);
			});
			const lines = createInterface({ input: proc.stdout! });
			lines.on("line", (line: string) => {
				let message: Json;
				try {
					message = JSON.parse(line);
				} catch {
					return; // not a protocol line
				}
				if (message === null || typeof message !== "object") return;
				if (message.type === "ready") {
					clearTimeout(timer);
					if (message.protocol !== PROTOCOL) {
						reject(new Error(`orbmcp speaks protocol ${message.protocol}, this extension ${PROTOCOL}: run \`orbmcp integrate pi\` again`));
					} else resolve(message);
					return;
				}
				this.received(message);
			});
		});
		this.ready.catch(() => undefined);
		return this.ready;
	}

	private ended(why: Error): void {
		this.proc = null;
		this.ready = null;
		for (const waiter of this.waiters.values()) waiter.reject(why);
		this.waiters.clear();
		for (const ask of this.asks.values()) ask.abort();
		this.asks.clear();
	}

	private send(message: Json): void {
		this.proc?.stdin?.write(`${JSON.stringify(message)}\n`);
	}

	async request(message: Json, timeoutMs?: number): Promise<Json> {
		await this.start();
		const id = `${message.type}-${++this.seq}`;
		return new Promise<Json>((resolve, reject) => {
			let timer: ReturnType<typeof setTimeout> | undefined;
			if (timeoutMs !== undefined) {
				timer = setTimeout(() => {
					this.waiters.delete(id);
					reject(new Error(`orbmcp did not answer within ${timeoutMs / 1000} s`));
				}, timeoutMs);
			}
			const done = (fn: () => void) => {
				if (timer) clearTimeout(timer);
				this.waiters.delete(id);
				fn();
			};
			this.waiters.set(id, {
				resolve: (m) => done(() => resolve(m)),
				reject: (e) => done(() => reject(e)),
			});
			this.send({ ...message, id });
		});
	}

	async run(line: string, ctx: Ctx): Promise<Json> {
		await this.start();
		const id = `run-${++this.seq}`;
		this.runs.set(id, ctx);
		try {
			return await new Promise<Json>((resolve, reject) => {
				this.waiters.set(id, { resolve, reject });
				this.send({ type: "run", id, line, cwd: process.cwd() });
			});
		} finally {
			this.waiters.delete(id);
			this.runs.delete(id);
		}
	}

	private received(message: Json): void {
		const type = message.type;
		if (type === "ask") {
			void this.ask(message);
		} else if (type === "ask_cancelled") {
			this.asks.get(String(message.id))?.abort();
		} else if (type === "progress") {
			// pi shows a command's output when it ends; progress is not shown.
		} else if (typeof message.id === "string" && this.waiters.has(message.id)) {
			this.waiters.get(message.id)!.resolve(message);
		} else if (type === "error" && message.id === null) {
			// an error about a line orbmcp could not read: nothing waits for it
		}
	}

	/** A server's question, in pi's dialogs (one per form field), answered on the protocol. */
	private async ask(message: Json): Promise<void> {
		const id = String(message.id);
		// `run` names the run that asks; null with `runs` when the server's question names no
		// request and several runs wait on it (asked in the dialogs of the first still running).
		const runs: unknown[] = message.run == null && Array.isArray(message.runs) ? message.runs : [message.run];
		const ctx = runs.map((run) => this.runs.get(String(run))).find((found) => found?.ui);
		if (!ctx?.ui) {
			this.send({ type: "answer", id, action: "cancel" });
			return;
		}
		const controller = new AbortController();
		this.asks.set(id, controller);
		try {
			const answer = await askInDialogs(ctx, message, controller.signal);
			if (!controller.signal.aborted) this.send({ type: "answer", id, ...answer });
		} catch {
			if (!controller.signal.aborted) this.send({ type: "answer", id, action: "cancel" });
		} finally {
			this.asks.delete(id);
		}
	}

	close(): void {
		const proc = this.proc;
		if (proc) {
			proc.stdin?.end(); // orbmcp cancels every run and exits when its stdin closes
			const timer = setTimeout(() => proc.kill("SIGTERM"), 5_000);
			timer.unref?.();
		}
	}
}

function titleOf(message: Json): string {
	const server = typeof message.server === "string" && message.server ? `${message.server}: ` : "";
	return `${server}${String(message.message ?? "")}`;
}

async function askInDialogs(ctx: Ctx, message: Json, signal: AbortSignal): Promise<Json> {
	const ui = ctx.ui;
	const opts = { signal };
	const title = titleOf(message);
	switch (message.kind) {
		case "confirm": {
			const detail = typeof message.detail === "string" ? message.detail : "";
			return { action: (await ui.confirm(title, detail, opts)) ? "accept" : "decline" };
		}
		case "url": {
			const ok = await ui.confirm(title, `Open ${String(message.url)} ?`, opts);
			return { action: ok ? "accept" : "decline" };
		}
		case "input": {
			const value = await ui.input(title, message.secret ? "(secret)" : "", opts);
			return value === undefined ? { action: "cancel" } : { action: "accept", value };
		}
		case "form":
			return askForm(ui, title, message.schema ?? {}, opts);
		default:
			return { action: "decline" };
	}
}

/** One dialog per field of an elicitation form; cancelling any dialog cancels the form. */
async function askForm(ui: any, title: string, schema: Json, opts: Json): Promise<Json> {
	const properties: Json = schema && typeof schema.properties === "object" ? schema.properties : {};
	const required = new Set<string>(Array.isArray(schema.required) ? schema.required : []);
	const content: Json = {};
	for (const [name, field] of Object.entries<Json>(properties)) {
		const label = `${title}\n${String(field.title ?? name)}${field.description ? ` — ${field.description}` : ""}${required.has(name) ? "" : " (optional)"}`;
		const choices: string[] | null = Array.isArray(field.enum)
			? field.enum.map(String)
			: Array.isArray(field.oneOf)
				? field.oneOf.map((o: Json) => String(o.const))
				: null;
		if (field.type === "array") {
			const items: Json = field.items ?? {};
			const allowed: string[] = Array.isArray(items.enum)
				? items.enum.map(String)
				: Array.isArray(items.anyOf)
					? items.anyOf.map((o: Json) => String(o.const))
					: [];
			const hint = allowed.length > 0 ? `comma-separated: ${allowed.join(", ")}` : "comma-separated";
			const value = await ui.input(`${label}\n(${hint})`, "", opts);
			if (value === undefined) return { action: "cancel" };
			const list = value.split(",").map((v: string) => v.trim()).filter((v: string) => v !== "");
			if (list.length === 0 && !required.has(name)) continue;
			content[name] = list;
		} else if (field.type === "boolean") {
			const picked = await ui.select(label, ["yes", "no"], opts);
			if (picked === undefined) return { action: "cancel" };
			content[name] = picked === "yes";
		} else if (choices) {
			const picked = await ui.select(label, required.has(name) ? choices : [...choices, "(skip)"], opts);
			if (picked === undefined) return { action: "cancel" };
			if (picked !== "(skip)") content[name] = picked;
		} else {
			const value = await ui.input(label, field.default !== undefined ? String(field.default) : "", opts);
			if (value === undefined) return { action: "cancel" };
			if (value === "" && !required.has(name)) continue;
			if (field.type === "number" || field.type === "integer") {
				const number = Number(value);
				content[name] = Number.isFinite(number) ? number : value;
			} else content[name] = value;
		}
	}
	return { action: "accept", content };
}

function errorText(result: Json): string {
	const error = result.error ?? {};
	const lines = [String(error.message ?? result.text ?? "orbmcp failed")];
	if (error.hint) lines.push(String(error.hint));
	return lines.join("\n");
}

export default async function orbmcpExtension(pi: ExtensionAPI): Promise<void> {
	const orbmcp = new Orbmcp();
	pi.on("session_shutdown", async () => orbmcp.close());

	let commands: Json[];
	try {
		const listed = await orbmcp.request({ type: "commands" }, LIST_TIMEOUT_MS);
		commands = Array.isArray(listed.commands) ? listed.commands : [];
		if (listed.type === "error") throw new Error(String(listed.error?.message ?? "orbmcp refused the command list"));
	} catch (error) {
		const why = error instanceof Error ? error.message : String(error);
		pi.registerCommand("mcp", {
			description: "orbmcp (unavailable: run /mcp for why)",
			handler: async (_args: string, ctx: Ctx) => ctx.ui.notify(`orbmcp: ${why}`, "error"),
		});
		return;
	}

	for (const command of commands) {
		const name = String(command.name ?? "");
		if (!/^mcp(:[a-z0-9-]+)?$/.test(name)) continue;
		const head = `/${name} `;
		pi.registerCommand(name, {
			description: String(command.description ?? command.usage ?? ""),
			// pi replaces the whole argument text with the chosen value: rebuild it from replace_from.
			getArgumentCompletions: async (prefix: string) => {
				const line = head + prefix;
				try {
					const answer = await orbmcp.request({ type: "complete", line }, COMPLETE_TIMEOUT_MS);
					const items: Json[] = Array.isArray(answer.items) ? answer.items.slice(0, MAX_COMPLETIONS) : [];
					const out = items
						.filter((item) => typeof item.value === "string" && Number.isInteger(item.replace_from))
						.map((item) => ({
							value: (line.slice(0, Math.max(head.length, item.replace_from)) + item.value).slice(head.length),
							label: item.value,
							description: item.description ? String(item.description) : undefined,
						}));
					return out.length > 0 ? out : null;
				} catch {
					return null;
				}
			},
			handler: async (args: string, ctx: Ctx) => {
				const line = args.trim() ? `/${name} ${args.trim()}` : `/${name}`;
				let result: Json;
				try {
					result = await orbmcp.run(line, ctx);
				} catch (error) {
					ctx.ui.notify(`orbmcp: ${error instanceof Error ? error.message : String(error)}`, "error");
					return;
				}
				if (result.type === "error" || result.error) {
					ctx.ui.notify(errorText(result), "error");
					return;
				}
				const content: Json[] = [];
				if (typeof result.text === "string" && result.text) content.push({ type: "text", text: result.text });
				for (const block of Array.isArray(result.content) ? result.content : []) {
					if (block?.type === "image" && typeof block.data === "string" && typeof block.mimeType === "string") {
						content.push({ type: "image", data: block.data, mimeType: block.mimeType });
					}
				}
				if (content.length === 0) content.push({ type: "text", text: "(no output)" });
				pi.sendMessage({
					customType: "orbmcp",
					content,
					display: true,
					details: { line, exit: result.exit, json: result.json ?? null },
				});
			},
		});
	}
}
