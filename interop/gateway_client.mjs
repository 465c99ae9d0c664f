// The TypeScript SDK's client (the @modelcontextprotocol/sdk that
// server-everything brings, pinned in package-lock.json) through the
// gateway: `node gateway_client.mjs URL` connects over Streamable HTTP,
// runs the steps gateway_ts_test.go names in its arguments, and prints
// one JSON object of what it saw on stdout. It asserts nothing itself:
// the Go test does. Every error is reported in the object, not thrown.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, transportKind, stepsJSON] = process.argv.slice(2);
const steps = JSON.parse(stepsJSON);
const out = { tools: [], echo: {}, prompts: {}, resources: {}, elicit: {}, approve: {}, asked: [], errors: [] };

const client = new Client({ name: "interop-ts", version: "1" }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  const message = req.params.message;
  out.asked.push(message);
  if (message.startsWith("Allow the tool call")) {
    // An approval the gateway asks for: yes to the tools steps.approveYes names.
    return { action: "accept", content: { approve: (steps.approveYes || []).some((n) => message.includes(n)) } };
  }
  return { action: "accept", content: { name: "Ada of " + message } };
});

const text = (content) => (content || []).filter((c) => c.type === "text").map((c) => c.text).join("");
const attempt = async (what, fn) => {
  try {
    await fn();
  } catch (e) {
    out.errors.push(`${what}: ${e && e.message}`);
  }
};

const transport = transportKind === "sse" ? new SSEClientTransport(new URL(url)) : new StreamableHTTPClientTransport(new URL(url));
await attempt("connect", async () => {
  await client.connect(transport);
  out.protocolVersion = transport.protocolVersion ?? null;
  out.serverName = client.getServerVersion()?.name ?? null;
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    out.tools.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  for (const s of steps.echo) {
    await attempt(`${s}__echo`, async () => {
      const r = await client.callTool({ name: `${s}__echo`, arguments: { text: steps.echoText[s] } });
      out.echo[s] = text(r.content);
    });
  }
  for (const s of steps.prompts) {
    await attempt(`${s}__greet`, async () => {
      const r = await client.getPrompt({ name: `${s}__greet`, arguments: { name: "Ann" } });
      out.prompts[s] = r.messages.map((m) => (m.content.type === "text" ? m.content.text : "")).join("");
    });
  }
  for (const uri of steps.resources) {
    await attempt(`read ${uri}`, async () => {
      const r = await client.readResource({ uri });
      out.resources[uri] = r.contents.map((c) => c.text ?? "").join("");
    });
  }
  for (const s of steps.elicit) {
    await attempt(`${s}__elicit`, async () => {
      const r = await client.callTool({ name: `${s}__elicit`, arguments: { message: `who via ${s}` } });
      out.elicit[s] = text(r.content);
    });
  }
  for (const name of steps.approve || []) {
    try {
      const r = await client.callTool({ name, arguments: { text: name } });
      out.approve[name] = { text: text(r.content), isError: !!r.isError };
    } catch (e) {
      out.approve[name] = { text: "", isError: true, error: String(e && e.message) };
    }
  }
});
await attempt("close", () => client.close());
process.stdout.write(JSON.stringify(out) + "\n");
