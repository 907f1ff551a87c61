// tsclient drives a fluxgit HTTP endpoint with the official TypeScript SDK
// client over the legacy Streamable HTTP transport: it lists and calls
// tools, reads shift://status, subscribes to it, checks in (which changes
// the roster) and waits for the resource-updated notification. It prints
// one JSON object with what it saw; tests/conformance_test.go asserts on it.
//
// Usage: node tsclient.mjs <endpoint URL>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const url = process.argv[2];
if (!url) {
  console.error("usage: node tsclient.mjs <endpoint URL>");
  process.exit(2);
}

const out = {};
const client = new Client({ name: "ts-sdk-client", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url));

let resolveUpdated;
const updated = new Promise((resolve) => { resolveUpdated = resolve; });
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolveUpdated(n.params.uri));

// withTimeout bounds a wait; its timer is cleared so that it does not keep
// the process alive after the work is done.
async function withTimeout(p, ms, what) {
  let timer;
  const expired = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([p, expired]);
  } finally {
    clearTimeout(timer);
  }
}

try {
  await client.connect(transport);
  out.protocolVersion = transport.protocolVersion ?? null;
  out.sessionId = transport.sessionId ?? null;
  out.serverName = client.getServerVersion()?.name ?? null;

  const tools = await client.listTools();
  out.tools = tools.tools.map((t) => t.name);

  const simple = await client.callTool({ name: "test_simple_text", arguments: {} });
  out.simpleText = simple.content?.find((c) => c.type === "text")?.text ?? null;

  const before = await client.readResource({ uri: "shift://status" });
  out.statusBefore = before.contents?.[0]?.text ?? null;

  await client.subscribeResource({ uri: "shift://status" });
  const checkIn = await client.callTool({ name: "shift_check_in", arguments: { gist: "typescript sdk client over http" } });
  out.checkInError = checkIn.isError === true;
  out.workerId = checkIn.structuredContent?.workerId ?? null;
  out.updatedUri = await withTimeout(updated, 10000, "notifications/resources/updated");

  const after = await client.readResource({ uri: "shift://status" });
  out.statusAfter = after.contents?.[0]?.text ?? null;

  await client.unsubscribeResource({ uri: "shift://status" });
  if (out.workerId) {
    await client.callTool({ name: "shift_check_out", arguments: { workerId: out.workerId } });
  }
  await transport.terminateSession();
  await client.close();
  console.log(JSON.stringify(out));
} catch (err) {
  out.error = err instanceof Error ? err.message : String(err);
  console.log(JSON.stringify(out));
  process.exit(1);
}
