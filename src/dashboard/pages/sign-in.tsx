// Sign in with email and password, or create a sandbox account: its secret key is shown once,
// with a button to copy it.
import { useState } from 'preact/hooks';
import { api } from '../api';
import { Field, FormError, Section, ShownOnce, useSubmit } from '../forms';
import type { Session } from '../session';

interface SessionAnswer { token: string; expires_at: string }
interface SignUpAnswer { account: { id: string }; api_key: { key: string }; session: SessionAnswer }

export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useSubmit();
  return (
    <Section title="Sign in">
      <form onSubmit={(e) => {
        e.preventDefault();
        void signIn.submit(async () => {
          const session = await api<SessionAnswer>('POST', '/v1/auth/sessions', { email, password });
          onSignedIn({ token: session.token, expiresAt: session.expires_at, email });
        });
      }}>
        <FormError message={signIn.errors.form} />
        <Field label="Email" name="email" type="email" autoComplete="username" value={email} onInput={setEmail} error={signIn.errors.fields.email} />
        <Field label="Password" name="password" type="password" autoComplete="current-password" value={password} onInput={setPassword} error={signIn.errors.fields.password} />
        <button type="submit" disabled={signIn.busy}>Sign in</button>
      </form>
    </Section>
  );
}

export function SignUp({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [form, setForm] = useState({ email: '', password: '', business_name: '', country_code: '' });
  const [created, setCreated] = useState<{ key: string; session: Session } | null>(null);
  const signUp = useSubmit();
  const set = (name: keyof typeof form) => (value: string) => setForm({ ...form, [name]: value });
  if (created) {
    return (
      <ShownOnce title="Your secret key" intro="Copy it now: it is shown only once. It moves money for your sandbox account from your code."
        secret={created.key} copyLabel="Copy secret key" doneLabel="Continue to the dashboard" onDone={() => onSignedIn(created.session)} />
    );
  }
  return (
    <Section title="Create sandbox account">
      <form onSubmit={(e) => {
        e.preventDefault();
        void signUp.submit(async () => {
          const answer = await api<SignUpAnswer>('POST', '/v1/sandbox/accounts', { ...form, country_code: form.country_code.trim().toUpperCase() });
          setCreated({ key: answer.api_key.key, session: { token: answer.session.token, expiresAt: answer.session.expires_at, email: form.email } });
        });
      }}>
        <FormError message={signUp.errors.form} />
        <Field label="Email" name="signup-email" type="email" autoComplete="email" value={form.email} onInput={set('email')} error={signUp.errors.fields.email} />
        <Field label="Password (at least 10 characters)" name="signup-password" type="password" autoComplete="new-password" value={form.password} onInput={set('password')} error={signUp.errors.fields.password} />
        <Field label="Business name" name="business_name" value={form.business_name} onInput={set('business_name')} error={signUp.errors.fields.business_name} autoComplete="organization" />
        <Field label="Country (ISO code, such as GB)" name="country_code" value={form.country_code} onInput={set('country_code')} error={signUp.errors.fields.country_code} autoComplete="country" />
        <button type="submit" disabled={signUp.busy}>Create sandbox account</button>
      </form>
    </Section>
  );
}
