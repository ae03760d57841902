// inputs.test.mjs's child: OP N -> how far one call on a reply string of N Mi characters
// (a flat string, two bytes of UTF-8 each) raised the process's peak resident memory (MB),
// the reply's size in bytes, and what the call answered, as JSON. One call a process: a
// peak is never lowered.
import { Contract, rounds } from "vouch";

const [op, mb] = process.argv.slice(2);
// A limit of 64 KiB: the most any call may copy of the reply is a few times that.
const contract = new Contract({ type: "object", "x-vouch": { limits: { max_bytes: 65536 } } });
const head = '{"s": "';
// Made from a Buffer: a flat string, as a reply read off a socket is.
const bytes = Buffer.concat([Buffer.from(head), Buffer.alloc(Number(mb) * 2 ** 21, "é"), Buffer.from('"}')]);
const reply = bytes.toString("utf8");
const size = bytes.length;
const peak = () => process.resourceUsage().maxRSS / 1024;
// The same call first on a small reply: what loading and a first call cost is not counted.
await call('{"s": "é"}');
const before = peak();
const answer = await call(reply);
const grew = peak() - before;
process.stdout.write(JSON.stringify({ grew, size, answer }));

async function call(reply) {
  switch (op) {
    case "check":
      return contract.check(reply).toJSON();
    case "checkMany":
      return (await contract.checkMany([reply]))[0].toJSON();
    case "reask":
      return contract.check(reply).reask();
    case "rounds": {
      const out = await rounds(contract, async () => reply, { maxRounds: 1, messages: [{ role: "user", content: "?" }] });
      return out.rounds[0].toJSON();
    }
    case "stream": {
      const live = contract.stream();
      live.feed(reply);
      return live.finish().toJSON();
    }
    default:
      throw new Error(`unknown op ${op}`);
  }
}
