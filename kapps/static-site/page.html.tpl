<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>{{ .kapp.vars.title | html }}</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <main>
    <h1>{{ .kapp.vars.title | html }}</h1>
    <p>{{ .kapp.vars.message | html }}</p>
    <dl>
      <dt>Stack</dt><dd>{{ .stack.name }}</dd>
      <dt>Kapp</dt><dd>{{ .kapp.manifestId }}:{{ .kapp.id }}</dd>
      <dt>Build</dt><dd id="build">{{ .kapp.vars.build_id | default "none" | html }}</dd>
    </dl>
  </main>
</body>
</html>
