// sfn-driver runs Amazon States Language definitions for the Go tests
// (internal/testenv/sfnlocal) in one Node process: asl-validator lints the
// definition, then aws-local-stepfunctions runs executions concurrently.
// Its Task states invoke Lambda through the AWS SDK, which the test points
// at a local Lambda Invoke endpoint (AWS_ENDPOINT_URL_LAMBDA) serving the
// real Go handlers. Waits and retry intervals are overridden to 0: the Go
// side keeps the virtual clock, which each Task's input (its `due`) moves
// on (or holds the invocation until the clock gets there).
//
// Batch (no argument):
// stdin:  {"definition": {...}, "executions": [{"name": "...", "input": {...}}]}
// stdout: {"validation": {"isValid": bool, "errors": [...]},
//          "executions": [{"name", "status": "SUCCEEDED"|"FAILED", "output", "error", "cause", "states": [names entered]}]}
//
// Serve (--serve): JSON lines both ways, for a test that starts executions
// as its system does. The first line in is {"definition": {...}}, answered
// by {"validation": ...}; then each line in, {"name", "input"}, starts an
// execution, and a line out, the result as above, says it ended.

// aws-local-stepfunctions 3.0.0 calls Promise.withResolvers (Node ≥ 22) in
// every Task; on Node 20 every Task would fail without it.
if (typeof Promise.withResolvers !== 'function') {
  Promise.withResolvers = function () {
    let resolve, reject
    const promise = new this((a, b) => { resolve = a; reject = b })
    return { promise, resolve, reject }
  }
}

const { StateMachine } = await import('aws-local-stepfunctions')
const { default: validator } = await import('asl-validator')

const serve = process.argv.includes('--serve')

let stdin
if (serve) {
  const { createInterface } = await import('node:readline')
  stdin = createInterface({ input: process.stdin, crlfDelay: Infinity })[Symbol.asyncIterator]()
}

async function readRequest () {
  if (serve) {
    const { value, done } = await stdin.next()
    return done ? null : JSON.parse(value)
  }
  const chunks = []
  for await (const c of process.stdin) chunks.push(c)
  return JSON.parse(Buffer.concat(chunks).toString('utf8'))
}

const req = await readRequest()
const def = req.definition
const { isValid, errors } = validator(structuredClone(def))
const validation = { isValid, errors: errors ?? [] }

const overrides = { waitTimeOverrides: {}, retryIntervalOverrides: {} }
for (const [name, st] of Object.entries(def.States)) {
  if (st.Type === 'Wait') overrides.waitTimeOverrides[name] = 0
  if (st.Type === 'Task') overrides.retryIntervalOverrides[name] = 0
}
const sm = isValid ? new StateMachine(def, { validationOptions: { checkArn: true, checkPaths: true } }) : null

async function execute ({ name, input }) {
  const ex = sm.run(input, { overrides })
  const states = []
  const logs = (async () => {
    for await (const ev of ex.eventLogs) {
      if (ev.type === 'StateEntered') states.push(ev.state.name)
    }
  })()
  const res = { name, states }
  try {
    res.output = await ex.result
    res.status = 'SUCCEEDED'
  } catch (e) {
    res.status = 'FAILED'
    res.error = e?.name ?? String(e)
    res.cause = e?.message ?? ''
  }
  await logs
  return res
}

if (!serve) {
  const out = { validation, executions: [] }
  if (isValid) out.executions = await Promise.all((req.executions ?? []).map(execute))
  process.stdout.write(JSON.stringify(out))
} else {
  process.stdout.write(JSON.stringify({ validation }) + '\n')
  const running = []
  for (let line = await readRequest(); line !== null; line = await readRequest()) {
    if (!isValid) break
    running.push(execute(line).then((res) => process.stdout.write(JSON.stringify(res) + '\n')))
  }
  await Promise.all(running)
}
