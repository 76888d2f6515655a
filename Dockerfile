# pyhpa controller image: `docker build -t pyhpa .` then see deploy/README.md.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY pyhpa ./pyhpa
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER 65532:65532
ENTRYPOINT ["pyhpa"]
CMD ["run", "--leader-elect"]
