import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const MCP_SERVER = new URL('../../node_modules/firecrawl-mcp/dist/index.js', import.meta.url).pathname;

/** Firecrawl's MCP server (npm `firecrawl-mcp`) over stdio, pointed at `base` with `token`, and a client connected to it. */
export async function firecrawlMcp(base: string, token: string): Promise<Client> {
  const mcp = new Client({ name: 'scrapejobs-test', version: '1.0.0' });
  await mcp.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [MCP_SERVER],
      env: { PATH: process.env.PATH ?? '', FIRECRAWL_API_URL: base, FIRECRAWL_API_KEY: token },
      stderr: 'ignore',
    }),
  );
  return mcp;
}
