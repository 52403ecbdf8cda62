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
// execution, and a line out, the result as above, says it ended. A start
// line may carry "startTime" (RFC 3339): the execution's StartTime on the
// test's virtual clock. The package sets $$.Execution.StartTime to the
// wall clock's; a Task input value that is that StartTime is given this
// one instead, so a definition passing "$$.Execution.StartTime" to its
// function judges its age on the test's clock. A line
// {"stop": name, "status": "ABORTED"|"TIMED_OUT"} ends a running
// execution as StopExecution or the machine's TimeoutSeconds would: its
// Lambda call in flight is abandoned (the request is closed) and it ends
// with that status.
//
// Tasks invoke Lambda as Step Functions does, not as the package's own
// client does: one Invoke per attempt (the SDK's own retries off: the
// state's Retry is the only retry), a function error named by its
// errorType, and a refusal of the Invoke API itself (429, 5xx) named
// "Lambda." + the exception (Lambda.TooManyRequestsException, …), which
// is what the state machine's Retry and Catch match on AWS.

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
const { LambdaClient, InvokeCommand } = await import('@aws-sdk/client-lambda')

const lambda = new LambdaClient({ maxAttempts: 1 })

// TaskError is an error as Step Functions names it to Retry and Catch.
class TaskError extends Error {
  constructor (name, message) {
    super(message)
    this.name = name
  }
}

// invoke calls the function resource with input, once, the request closed
// when signal aborts.
async function invoke (resource, input, signal) {
  let out
  try {
    out = await lambda.send(new InvokeCommand({ FunctionName: resource, Payload: new TextEncoder().encode(JSON.stringify(input)) }), { abortSignal: signal })
  } catch (e) {
    if (signal.aborted) throw new TaskError('States.Aborted', 'the execution was stopped')
    const name = e?.$metadata?.httpStatusCode ? 'Lambda.' + (e.name ?? 'ServiceException') : 'Lambda.SdkClientException'
    throw new TaskError(name, e?.message ?? String(e))
  }
  const text = out.Payload ? new TextDecoder().decode(out.Payload) : ''
  const value = text ? JSON.parse(text) : null
  if (out.FunctionError) {
    throw new TaskError(value?.errorType ?? 'Lambda.Unknown', `${value?.errorType}: ${value?.errorMessage}`)
  }
  return value
}

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

const tasks = Object.entries(def.States ?? {}).filter(([, st]) => st.Type === 'Task')
const waitTimeOverrides = {}
const retryIntervalOverrides = {}
for (const [name, st] of Object.entries(def.States ?? {})) {
  if (st.Type === 'Wait') waitTimeOverrides[name] = 0
  if (st.Type === 'Task') retryIntervalOverrides[name] = 0
}
// In serve mode a Task's TimeoutSeconds is lifted: the test holds a Task's
// invocation for the wall time its Wait takes on the test's clock, and the
// package would count that against the Task (the function itself takes no
// time on that clock).
let runDef = def
if (serve && isValid) {
  runDef = structuredClone(def)
  for (const st of Object.values(runDef.States)) {
    if (st.Type === 'Task' && st.TimeoutSeconds !== undefined) st.TimeoutSeconds = 1000000 // setTimeout takes at most 2^31-1 ms
  }
}
const sm = isValid ? new StateMachine(runDef, { validationOptions: { checkArn: true, checkPaths: true } }) : null

// running: the executions started and not ended, by name.
const running = new Map()

// withStartTime is a Task's input with the top-level values that are the
// package's StartTime — an ISO instant taken between before and after —
// replaced by startTime.
function withStartTime (input, before, after, startTime) {
  if (!startTime || input === null || typeof input !== 'object' || Array.isArray(input)) return input
  const out = { ...input }
  for (const [k, v] of Object.entries(out)) {
    if (typeof v !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(v)) continue
    const at = Date.parse(v)
    if (at >= before && at <= (after || Date.now())) out[k] = startTime // the first Task may run inside run()
  }
  return out
}

async function execute ({ name, input, startTime }) {
  const calls = new AbortController()
  const taskResourceLocalHandlers = {}
  let before = 0
  let after = 0
  for (const [state, st] of tasks) {
    taskResourceLocalHandlers[state] = (in_) => invoke(st.Resource, withStartTime(in_, before, after, startTime), calls.signal)
  }
  before = Date.now()
  const ex = sm.run(input, { overrides: { waitTimeOverrides, retryIntervalOverrides, taskResourceLocalHandlers } })
  after = Date.now()
  const entry = { ex, calls, stopped: null }
  running.set(name, entry)
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
    res.status = entry.stopped ?? 'FAILED'
    res.error = e?.name ?? String(e)
    res.cause = e?.message ?? ''
  }
  running.delete(name)
  await logs
  return res
}

// stop ends a running execution with status (ABORTED, TIMED_OUT); a name
// that is not running is ignored (it ended meanwhile).
function stop ({ stop: name, status }) {
  const entry = running.get(name)
  if (!entry || entry.stopped) return
  entry.stopped = status === 'TIMED_OUT' ? 'TIMED_OUT' : 'ABORTED'
  entry.calls.abort()
  entry.ex.abort()
}

if (!serve) {
  const out = { validation, executions: [] }
  if (isValid) out.executions = await Promise.all((req.executions ?? []).map(execute))
  process.stdout.write(JSON.stringify(out))
} else {
  process.stdout.write(JSON.stringify({ validation }) + '\n')
  const ends = []
  for (let line = await readRequest(); line !== null; line = await readRequest()) {
    if (!isValid) break
    if (line.stop !== undefined) {
      stop(line)
      continue
    }
    ends.push(execute(line).then((res) => process.stdout.write(JSON.stringify(res) + '\n')))
  }
  await Promise.all(ends)
}
