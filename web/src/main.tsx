/** The kapps web page: login, stacks, the fleet, a stack, its drift, a run (live), results, releases. Hash routing. */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, describeError, getToken, setToken, setUnauthorizedHandler, type Whoami } from './api';
import { href } from './format';
import { DriftPage } from './pages/drift';
import { FleetPage } from './pages/fleet';
import { ReleaseDiffPage, ReleasePage } from './pages/release';
import { RunPage } from './pages/run';
import { StackPage } from './pages/stack';
import { StacksPage } from './pages/stacks';
import './style.css';

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return hash;
}

function Login(props: { onLogin: (who: Whoami) => void; message: string | null }) {
  const [token, setTokenValue] = useState('');
  const [error, setError] = useState<string | null>(props.message);
  const [busy, setBusy] = useState(false);
  const submit = async (ev: Event) => {
    ev.preventDefault();
    setBusy(true);
    setToken(token.trim() || null);
    try {
      props.onLogin(await api.whoami());
    } catch (e) {
      setToken(null);
      setError(e instanceof ApiError && e.status === 401 ? 'The server refused this token.' : describeError(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <h1>kapps</h1>
      <form onSubmit={(ev) => void submit(ev)} aria-label="Log in">
        <label for="token">Token</label>
        <input
          id="token"
          type="password"
          autocomplete="off"
          value={token}
          onInput={(ev) => setTokenValue((ev.target as HTMLInputElement).value)}
        />
        <p class="hint">Kept for this browser tab only. Leave empty for a local server without tokens.</p>
        <button type="submit" disabled={busy}>
          Log in
        </button>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}

function Route(props: { hash: string; who: Whoami }) {
  const parts = props.hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter(Boolean)
    .map((p) => decodeURIComponent(p));
  const [a, b, c, d, e, f] = parts;
  if (a === 'runs' && b) {
    const line = /^L(\d{1,9})$/.exec(c ?? '');
    return <RunPage key={b} id={b} who={props.who} line={line ? Number(line[1]) : null} />;
  }
  if (a === 'fleet') return <FleetPage />;
  if (a === 'stacks' && b && c) {
    if (d === 'releases' && e)
      return <ReleasePage key={props.hash} project={b} stack={c} revision={Number(e)} who={props.who} />;
    if (d === 'drift') return <DriftPage key={props.hash} project={b} stack={c} who={props.who} />;
    if (d === 'diff' && e && f)
      return <ReleaseDiffPage key={props.hash} project={b} stack={c} from={Number(e)} to={Number(f)} />;
    return <StackPage key={`${b}/${c}`} project={b} stack={c} who={props.who} />;
  }
  return <StacksPage />;
}

function App() {
  const hash = useHash();
  const [who, setWho] = useState<Whoami | null>(null);
  const [state, setState] = useState<'checking' | 'login' | 'ready' | 'unreachable'>('checking');
  const [message, setMessage] = useState<string | null>(null);

  const check = () => {
    setState('checking');
    api
      .whoami()
      .then((w) => {
        setWho(w);
        setState('ready');
      })
      .catch((e: unknown) => {
        if (e instanceof ApiError && e.status === 401) {
          setMessage(getToken() ? 'Your session ended: log in again.' : null);
          setToken(null);
          setState('login');
        } else {
          setMessage(describeError(e));
          setState('unreachable');
        }
      });
  };
  useEffect(() => {
    setUnauthorizedHandler(() => {
      setToken(null);
      setMessage('The server refused the token: log in again.');
      setState('login');
    });
    check();
  }, []);

  if (state === 'checking') return <p class="loading">Connecting…</p>;
  if (state === 'unreachable')
    return (
      <main class="login">
        <h1>kapps</h1>
        <p role="alert" class="error">
          {message}
        </p>
        <button type="button" onClick={check}>
          Retry
        </button>
      </main>
    );
  if (state === 'login' || !who)
    return (
      <Login
        message={message}
        onLogin={(w) => {
          setWho(w);
          setMessage(null);
          setState('ready');
        }}
      />
    );
  return (
    <>
      <header class="top">
        <a href={href.stacks()} class="brand">
          kapps
        </a>
        <nav aria-label="Main">
          <a href={href.stacks()} aria-current={['', '#', '#/'].includes(hash) ? 'page' : undefined}>
            Stacks
          </a>
          <a href={href.fleet()} aria-current={hash.startsWith(href.fleet()) ? 'page' : undefined}>
            Fleet
          </a>
        </nav>
        <span class="who" data-testid="who">
          {who.name} ({who.role})
        </span>
        <button
          type="button"
          onClick={() => {
            setToken(null);
            setWho(null);
            setMessage(null);
            setState('login');
          }}
        >
          Log out
        </button>
      </header>
      <main>
        <Route hash={hash} who={who} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
