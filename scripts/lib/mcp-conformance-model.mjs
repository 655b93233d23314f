// The model in an MCP conformance run's chat (scenario json-schema-2020-12-preservation): an
// OpenAI-compatible chat completions endpoint on 127.0.0.1 that, shown the tools, calls the
// tool named ECHO with {schema: <the parameters of the tool named FOCAL, as the app sent them>}
// (first finding its plugin when the app sends the find step), then ends the turn. What it
// echoes is what a model is shown of a server's schema.
// Prints its port on the first line of standard output; serves until killed.
import http from 'node:http';

const [focal, echo] = process.argv.slice(2);

function stream(res, delta, finish) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream' });
  const chunk = (d, f) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: d, finish_reason: f }] })}\n\n`;
  res.write(chunk(delta, null));
  res.write(chunk({}, finish));
  res.end('data: [DONE]\n\n');
}

http
  .createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const request = JSON.parse(body || '{}');
      const tools = (request.tools ?? []).map((t) => t.function);
      const shown = tools.find((t) => t.name.endsWith(focal));
      const target = tools.find((t) => t.name.endsWith(echo));
      // With many tools installed the app sends a find step (find_tools) listing each plugin
      // with its tools' names, and the tools themselves only once their plugin is found: the
      // model finds the plugin that has the focal tool first, as a model does.
      const find = tools.find((t) => t.name === 'find_tools');
      const toolAnswers = (request.messages ?? []).filter((m) => m.role === 'tool').length;
      if (find && !shown && toolAnswers === 0) {
        const line = (find.description ?? '').split('\n').find((l) => l.includes(focal));
        const plugin = line?.split(' ')[0];
        if (plugin) {
          const call = {
            index: 0,
            id: 'find-1',
            type: 'function',
            function: { name: 'find_tools', arguments: JSON.stringify({ plugins: [plugin] }) }
          };
          stream(res, { role: 'assistant', tool_calls: [call] }, 'tool_calls');
          return;
        }
      }
      // The echo has been called once the tool answers outnumber the find's.
      const answered = toolAnswers > (find ? 1 : 0);
      if (answered || !shown || !target) {
        stream(res, { role: 'assistant', content: 'done' }, 'stop');
        return;
      }
      const call = {
        index: 0,
        id: 'call-1',
        type: 'function',
        function: { name: target.name, arguments: JSON.stringify({ schema: shown.parameters }) }
      };
      stream(res, { role: 'assistant', tool_calls: [call] }, 'tool_calls');
    });
  })
  .listen(0, '127.0.0.1', function () {
    console.log(this.address().port);
  });
