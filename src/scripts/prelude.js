// The server-side API a script sees, as the service documents it: getContext() with the
// collection, request and response; the `__` shorthand; console.log. Evaluated once per
// runtime before the script. Every database operation goes to the host through the one
// native function `__host_call(op, argsJson) -> replyJson`; the host performs it at once,
// in the execution's transaction, and the callback is queued, to run after the current
// code returns — as on the service, where operations complete asynchronously. So a script
// that chains thousands of operations through callbacks (the bulk import) does not nest
// them on the stack.
(function (global) {
    "use strict";
    var hostCall = global.__host_call;
    delete global.__host_call;

    var queue = [];
    var log = [];
    var state = { request: undefined, response: undefined, kind: "" };

    var ErrorCodes = {
        BadRequest: 400,
        Forbidden: 403,
        NotFound: 404,
        Conflict: 409,
        PreconditionFailed: 412,
        RequestEntityTooLarge: 413,
        RetryWith: 449,
        InternalServerError: 500
    };

    function call(op, args) {
        return JSON.parse(hostCall(op, JSON.stringify(args)));
    }

    // An error as the service hands it to a callback: `number` is the status code,
    // `body` the JSON the REST API would answer with.
    function serviceError(e) {
        var err = new Error(e.message);
        err.number = e.number;
        err.substatus = e.substatus;
        err.body = JSON.stringify({ code: e.code, message: e.message });
        return err;
    }

    // Runs `op` now and queues its callback; returns isAccepted. An error without a
    // callback is thrown, by the queue, as the service's runtime does.
    function operation(op, args, callback) {
        if (callback !== undefined && typeof callback !== "function") {
            throw new Error("The callback of " + op + " must be a function");
        }
        var reply = call(op, args);
        if (!reply.accepted) {
            return false;
        }
        var options = reply.options || {};
        if (reply.error) {
            var err = serviceError(reply.error);
            queue.push(function () {
                if (callback) {
                    callback(err, undefined, options);
                } else {
                    throw err;
                }
            });
        } else if (callback) {
            queue.push(function () {
                callback(undefined, reply.result, options);
            });
        }
        return true;
    }

    // (link, a, [options], [callback]) with options optional.
    function split(options, callback) {
        if (typeof options === "function") {
            return { options: {}, callback: options };
        }
        return { options: options || {}, callback: callback };
    }

    function querySpec(q) {
        if (typeof q === "string") {
            return { query: q, parameters: [] };
        }
        if (q && typeof q.query === "string") {
            return { query: q.query, parameters: q.parameters || [] };
        }
        throw new Error("queryDocuments takes a SQL string or {query, parameters}");
    }

    var collection = {
        getSelfLink: function () { return state.selfLink; },
        getAltLink: function () { return state.altLink; },
        createDocument: function (link, doc, options, callback) {
            var a = split(options, callback);
            return operation("create", { link: link, doc: doc, options: a.options }, a.callback);
        },
        upsertDocument: function (link, doc, options, callback) {
            var a = split(options, callback);
            return operation("upsert", { link: link, doc: doc, options: a.options }, a.callback);
        },
        replaceDocument: function (link, doc, options, callback) {
            var a = split(options, callback);
            return operation("replace", { link: link, doc: doc, options: a.options }, a.callback);
        },
        deleteDocument: function (link, options, callback) {
            var a = split(options, callback);
            return operation("delete", { link: link, options: a.options }, a.callback);
        },
        readDocument: function (link, options, callback) {
            var a = split(options, callback);
            return operation("read", { link: link, options: a.options }, a.callback);
        },
        readDocuments: function (link, options, callback) {
            var a = split(options, callback);
            return operation("query", { link: link, query: querySpec("SELECT * FROM root"), options: a.options }, a.callback);
        },
        queryDocuments: function (link, query, options, callback) {
            var a = split(options, callback);
            return operation("query", { link: link, query: querySpec(query), options: a.options }, a.callback);
        }
    };

    // The fluent query helpers over the logical partition's documents: each step is a
    // function of the document list, run when the chain ends.
    function readAll(options) {
        var reply = call("query", { link: state.altLink, query: querySpec("SELECT * FROM root"), options: { pageSize: -1 } });
        return reply;
    }
    var steps = {
        filter: function (docs, f) { return docs.filter(function (d) { return f(d); }); },
        map: function (docs, f) { return docs.map(function (d) { return f(d); }); },
        pluck: function (docs, name) { return docs.map(function (d) { return d[name]; }); },
        flatten: function (docs, shallow) {
            var out = [];
            (function flat(list, depth) {
                list.forEach(function (x) {
                    if (Array.isArray(x) && (!shallow || depth === 0)) { flat(x, depth + 1); } else { out.push(x); }
                });
            })(docs, 0);
            return out;
        },
        sortBy: function (docs, f) { return sorted(docs, f, 1); },
        sortByDescending: function (docs, f) { return sorted(docs, f, -1); }
    };
    function sorted(docs, f, dir) {
        var key = typeof f === "function" ? f : function (d) { return d[f]; };
        return docs.slice().sort(function (a, b) {
            var x = key(a), y = key(b);
            return x < y ? -dir : x > y ? dir : 0;
        });
    }
    function runChain(list, options, callback) {
        var a = split(options, callback);
        var reply = readAll(a.options);
        if (!reply.accepted) { return { isAccepted: false }; }
        var err = reply.error ? serviceError(reply.error) : undefined;
        var docs = err ? undefined : list.reduce(function (d, s) { return steps[s.step](d, s.arg); }, reply.result);
        queue.push(function () {
            if (a.callback) { a.callback(err, docs, {}); } else if (err) { throw err; }
        });
        return { isAccepted: true };
    }
    function chain(list) {
        var c = {};
        Object.keys(steps).forEach(function (name) {
            c[name] = function (arg) { return chain(list.concat([{ step: name, arg: arg }])); };
        });
        c.value = function (options, callback) { return runChain(list, options, callback); };
        return c;
    }
    var shorthand = Object.create(collection);
    Object.keys(steps).forEach(function (name) {
        shorthand[name] = function (arg, options, callback) {
            return runChain([{ step: name, arg: arg }], options, callback);
        };
    });
    shorthand.chain = function () { return chain([]); };

    function message(holder, allowSet) {
        return {
            getBody: function () { return holder.body; },
            setBody: function (v) {
                if (!allowSet) { throw new Error("The body of this message cannot be set here"); }
                holder.body = v;
            },
            appendBody: function (v) {
                if (!allowSet) { throw new Error("The body of this message cannot be set here"); }
                holder.body = holder.body === undefined ? v : String(holder.body) + String(v);
            },
            getValue: function (name) { return name === "body" ? holder.body : holder.values[name]; },
            setValue: function (name, v) {
                if (name === "body") { holder.body = v; } else { holder.values[name] = v; }
            },
            appendValue: function (name, v) {
                var old = this.getValue(name);
                this.setValue(name, old === undefined ? v : String(old) + String(v));
            },
            getResourceQuotaCurrentUsage: function () { return holder.values.quotaUsage || ""; },
            getMaxResourceQuota: function () { return holder.values.quota || ""; }
        };
    }

    var context = {
        getCollection: function () { return collection; },
        getRequest: function () { return state.requestApi; },
        getResponse: function () { return state.responseApi; },
        abort: function (err) {
            throw err === undefined ? new Error("The script aborted the transaction") : err;
        }
    };

    global.getContext = function () { return context; };
    global.__ = shorthand;
    global.ErrorCodes = ErrorCodes;
    global.console = {
        log: function () {
            log.push(Array.prototype.map.call(arguments, function (a) {
                return typeof a === "string" ? a : JSON.stringify(a);
            }).join(" "));
        }
    };

    function describe(e) {
        if (e instanceof Error) {
            return {
                number: typeof e.number === "number" ? e.number : undefined,
                substatus: e.substatus,
                name: e.name,
                message: String(e.message),
                stack: e.stack ? String(e.stack) : ""
            };
        }
        var text;
        try { text = typeof e === "string" ? e : JSON.stringify(e); } catch (x) { text = String(e); }
        return { name: "", message: String(text), stack: "" };
    }

    var failure;
    var request = { body: undefined, values: {} };
    var response = { body: undefined, values: {} };

    // Starts one script: `fn` is the script's function, `input` JSON with its arguments,
    // the request and response bodies and the links. The host then alternates
    // `__cosmoscope_drain` (queued callbacks) with the runtime's promise jobs until neither
    // has work, and reads the outcome with `__cosmoscope_finish`.
    global.__cosmoscope_start = function (fn, input) {
        var inp = JSON.parse(input);
        state.selfLink = inp.selfLink;
        state.altLink = inp.altLink;
        request = { body: inp.request, values: inp.requestValues || {} };
        response = { body: inp.response, values: inp.responseValues || {} };
        // A stored procedure sets its response; a pre-trigger its request; a post-trigger
        // may read the response and set it.
        state.requestApi = message(request, inp.kind === "pre");
        state.responseApi = message(response, inp.kind !== "pre");
        try {
            if (typeof fn !== "function") {
                throw new Error("The script's body is not a function");
            }
            var result = fn.apply(context, inp.args || []);
            // An async function's promise: its rejection is the script's error.
            if (result && typeof result.then === "function") {
                result.then(undefined, function (e) {
                    queue.push(function () { throw e; });
                });
            }
        } catch (e) {
            failure = failure || describe(e);
        }
    };

    // Runs the queued callbacks; returns whether there were any.
    global.__cosmoscope_drain = function () {
        var ran = false;
        while (queue.length > 0 && failure === undefined) {
            ran = true;
            try {
                queue.shift()();
            } catch (e) {
                failure = describe(e);
            }
        }
        return ran;
    };

    global.__cosmoscope_finish = function () {
        var out = { log: log.join("\n") };
        if (failure !== undefined) {
            out.error = failure;
            return JSON.stringify(out);
        }
        if (response.body !== undefined) { out.response = response.body; }
        if (request.body !== undefined) { out.request = request.body; }
        return JSON.stringify(out);
    };
})(globalThis);
