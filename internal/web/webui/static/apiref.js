// The interactive API reference: Swagger UI over the served OpenAPI
// document, with the page's tenant selector applied to every {tenant} path
// parameter and test requests sent with the configuration-manager session
// (its cookie goes along by itself; the CSRF token is added here).
(function () {
  'use strict';

  var meta = function (name) {
    var el = document.querySelector('meta[name="' + name + '"]');
    return el ? el.getAttribute('content') : '';
  };
  var signedIn = document.body.getAttribute('data-signed-in') === 'yes';
  var csrfHeader = meta('csrf-header');
  var csrfToken = meta('csrf-token');
  var select = document.getElementById('sb-tenant');
  var statusBox = document.getElementById('sb-status');
  var baseSpec = null;
  var tenants = [];
  var ui = null;

  function status(text) {
    statusBox.textContent = text;
    statusBox.hidden = !text;
  }

  // eachTenantParam calls fn(param, path, method) for every parameter
  // named tenant, in the path or the query, of every operation.
  function eachTenantParam(spec, fn) {
    Object.keys(spec.paths || {}).forEach(function (path) {
      var item = spec.paths[path];
      Object.keys(item).forEach(function (method) {
        var op = item[method];
        if (!op || !Array.isArray(op.parameters)) return;
        op.parameters.forEach(function (p) {
          if (p && p.name === 'tenant' && (p.in === 'path' || p.in === 'query')) fn(p, path, method);
        });
      });
    });
  }

  // withTenant returns a copy of the document in which every tenant path
  // parameter offers the session's tenants and starts at the chosen one;
  // tenant query filters offer the same list without a default (empty
  // means all the session may see). Test requests go to this server,
  // whatever base URL the document names.
  function withTenant(chosen) {
    var spec = JSON.parse(JSON.stringify(baseSpec));
    spec.servers = [{ url: window.location.origin, description: 'this server' }];
    eachTenantParam(spec, function (p) {
      var schema = { type: 'string' };
      if (tenants.length) schema.enum = tenants.slice();
      if (p.in === 'path' && chosen) {
        schema.default = chosen;
        p.example = chosen;
      }
      p.schema = schema;
    });
    return spec;
  }

  // Search matches an operation's path, method, summary, operation id or
  // tag, not only the tag as Swagger UI's own filter does.
  function searchPlugin() {
    return {
      fn: {
        opsFilter: function (taggedOps, phrase) {
          var q = String(phrase || '').trim().toLowerCase();
          if (!q) return taggedOps;
          return taggedOps.map(function (tag, name) {
            return tag.set('operations', tag.get('operations').filter(function (op) {
              var o = op.get('operation');
              return [name, op.get('path'), op.get('method'), o && o.get('summary'), o && o.get('operationId')]
                .some(function (s) { return s && String(s).toLowerCase().indexOf(q) >= 0; });
            }));
          }).filter(function (tag) { return tag.get('operations').size > 0; });
        }
      }
    };
  }

  // The snippets (curl and the others) show what a program sends: an API
  // key (a placeholder for the reader's own), never this browser's session
  // cookie or CSRF token.
  function snippetPlugin() {
    var original = window.SwaggerUIBundle.plugins.RequestSnippets().fn;
    var fn = {};
    Object.keys(original).forEach(function (name) {
      if (name.indexOf('requestSnippetGenerator_') !== 0) return;
      fn[name] = function (request) {
        var headers = request.get('headers');
        if (headers && headers.filter) {
          headers = headers.filter(function (v, k) {
            var h = String(k).toLowerCase();
            return h !== 'cookie' && h !== String(csrfHeader).toLowerCase() && h !== 'x-api-key';
          });
          request = request.set('headers', headers.set('X-API-Key', '$KEY'));
        }
        return original[name](request);
      };
    });
    return { fn: fn };
  }

  // The session cookie is same-origin, so fetch sends it; writes carry the
  // CSRF token the server put in the page.
  function requestInterceptor(req) {
    req.credentials = 'same-origin';
    // The sessionCookie scheme is marked authorized to show the session
    // works; the browser sends the real cookie, never a header of ours.
    Object.keys(req.headers || {}).forEach(function (h) {
      if (h.toLowerCase() === 'cookie') delete req.headers[h];
    });
    if (csrfHeader && csrfToken && !/^(GET|HEAD|OPTIONS)$/i.test(req.method || 'GET')) {
      req.headers[csrfHeader] = csrfToken;
    }
    return req;
  }

  // A 401 to a test request while the page thinks it is signed in means
  // the session ended elsewhere (sign-out, expiry, revocation).
  function responseInterceptor(res) {
    if (signedIn && res && res.status === 401) window.sbSession.signedOut();
    return res;
  }

  function render() {
    var chosen = select ? select.value : '';
    ui = window.SwaggerUIBundle({
      spec: withTenant(chosen),
      dom_id: '#swagger-ui',
      deepLinking: true,
      filter: true,
      docExpansion: 'list',
      defaultModelsExpandDepth: 0,
      defaultModelExpandDepth: 3,
      displayOperationId: true,
      displayRequestDuration: true,
      showCommonExtensions: true,
      // Without a session there is nothing to send requests with: the page
      // is a read-only reference and the header offers the login.
      supportedSubmitMethods: signedIn ? ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] : [],
      requestInterceptor: requestInterceptor,
      responseInterceptor: responseInterceptor,
      plugins: [searchPlugin, snippetPlugin],
      onComplete: showSignedIn,
      // The snippets (curl for bash, PowerShell, CMD) come from our
      // generators (snippetPlugin), which show a key placeholder.
      requestSnippetsEnabled: true,
      layout: 'BaseLayout'
    });
  }

  // showSignedIn makes the Authorize button and the padlocks say what is
  // true: the session authorizes the operations that take it.
  function showSignedIn() {
    if (!signedIn || window.sbSession.isSignedOut()) return;
    var user = document.querySelector('.sb-user');
    ui.preauthorizeApiKey('sessionCookie', 'this browser\'s session' + (user ? ' (' + user.textContent.trim() + ')' : ''));
  }
  document.addEventListener('sb-signed-out', function () {
    if (ui) ui.authActions.logout(['sessionCookie']);
  });

  // retarget applies a newly chosen tenant: the document's defaults, and
  // the value of every tenant path parameter already in a test form.
  function retarget() {
    var chosen = select.value;
    var spec = withTenant(chosen);
    ui.specActions.updateSpec(JSON.stringify(spec));
    eachTenantParam(spec, function (p, path, method) {
      if (p.in === 'path' && typeof ui.specActions.changeParam === 'function') {
        ui.specActions.changeParam([path, method], 'tenant', 'path', chosen, false);
      }
    });
    try { window.localStorage.setItem('switchboard.tenant', chosen); } catch (e) { /* private mode */ }
  }

  function loadTenants() {
    return fetch('/api/tenants/?limit=1000', { credentials: 'same-origin', headers: { Accept: 'application/json' } })
      .then(function (r) {
        if (!r.ok) throw new Error('the tenant list answered ' + r.status);
        return r.json();
      })
      .then(function (list) {
        tenants = list.map(function (t) { return t.tenant; });
        select.textContent = '';
        if (!tenants.length) {
          var none = document.createElement('option');
          none.value = '';
          none.textContent = '(no tenants)';
          select.appendChild(none);
        }
        tenants.forEach(function (name) {
          var o = document.createElement('option');
          o.value = o.textContent = name;
          select.appendChild(o);
        });
        var saved = '';
        try { saved = window.localStorage.getItem('switchboard.tenant') || ''; } catch (e) { /* private mode */ }
        if (tenants.indexOf(saved) >= 0) select.value = saved;
      });
  }

  fetch('/api/openapi.json', { headers: { Accept: 'application/json' } })
    .then(function (r) {
      if (!r.ok) throw new Error('the OpenAPI document answered ' + r.status);
      return r.json();
    })
    .then(function (spec) {
      baseSpec = spec;
      if (!signedIn || !select) return null;
      return loadTenants().catch(function (e) { status('Tenants could not be loaded: ' + e.message); });
    })
    .then(function () {
      render();
      if (select) select.addEventListener('change', retarget);
    })
    .catch(function (e) { status('The reference could not be loaded: ' + e.message); });
})();
