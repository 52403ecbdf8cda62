// sfn-driver runs Amazon States Language definitions for the Go tests
// (internal/runtime/awsrt, the agreement test) in one Node process:
// asl-validator lints the definition, then aws-local-stepfunctions runs
// every execution of the request concurrently. Its Task states invoke
// Lambda through the AWS SDK, which the test points at a local Lambda
// Invoke endpoint (AWS_ENDPOINT_URL_LAMBDA) serving the real Go handlers.
// Waits and retry intervals are overridden to 0: the Go side keeps the
// virtual clock, which each Task's input (its `due`) moves on.
//
// stdin:  {"definition": {...}, "executions": [{"name": "...", "input": {...}}]}
// stdout: {"validation": {"isValid": bool, "errors": [...]},
//          "executions": [{"name", "status": "SUCCEEDED"|"FAILED", "output", "error", "cause", "states": [names entered]}]}

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

const chunks = []
for await (const c of process.stdin) chunks.push(c)
const req = JSON.parse(Buffer.concat(chunks).toString('utf8'))
const def = req.definition

const { isValid, errors } = validator(structuredClone(def))
const out = { validation: { isValid, errors: errors ?? [] }, executions: [] }

if (isValid) {
  const waits = {}
  const retries = {}
  for (const [name, st] of Object.entries(def.States)) {
    if (st.Type === 'Wait') waits[name] = 0
    if (st.Type === 'Task') retries[name] = 0
  }
  const sm = new StateMachine(def, { validationOptions: { checkArn: true, checkPaths: true } })
  out.executions = await Promise.all((req.executions ?? []).map(async ({ name, input }) => {
    const ex = sm.run(input, { overrides: { waitTimeOverrides: waits, retryIntervalOverrides: retries } })
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
  }))
}
process.stdout.write(JSON.stringify(out))
